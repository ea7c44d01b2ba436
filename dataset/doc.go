// Package dataset is the contract of a certified prefix: what a job that writes a dataset
// (export, backfill) leaves at a prefix of a store, and what Validate checks there, touching
// only the store. It knows no source and no format's library: it imports no database driver
// and no Arrow or Parquet package (a test holds it to that), so every job and tool that reads
// or writes the contract can use it.
//
// # The contract
//
// At the prefix:
//
//   - parts, each listed by the manifest with its key (relative to the prefix), rows, size,
//     sha256 and the store's ETag; a part written by export is named
//     part-<run_id>-<chunk>.<ext>;
//   - manifest.json (ManifestKey): a Manifest, written by Manifest.Encode (indented JSON, a
//     final newline) after every part it lists; ManifestVersion is its layout's version, and
//     DecodeManifest refuses bytes without one or without a run id. It never holds a
//     credential: the source is named by host or file only;
//   - _SUCCESS (SuccessKey), written after the manifest and only for a succeeded run: the hex
//     sha256 of manifest.json's exact bytes (SuccessBody);
//   - after a repair, the parts it replaced, beside the parts that replaced them: the manifest
//     names them under superseded, and never lists them as parts;
//   - under _superseded/<run_id>/ (SupersededDir) an earlier run's parts moved out of the
//     way, and under _quarantine/<run_id>/ (QuarantineDir) objects found where a part belongs
//     that no journal vouched for; neither is ever read as part of the dataset.
//
// A manifest with a LogRef was journaled in a commit log (export's state: bucket): it is
// certified only when the entry its LogRef names is committed (package lease) and certifies
// this run with the sha256 of these manifest bytes.
//
// # What Validate promises
//
// Validate reads _SUCCESS and manifest.json, compares the marker with the manifest's hash and
// the manifest with itself (schema fingerprint, row total), and HEADs every part: a deleted,
// truncated or rewritten part (another size or ETag), or one the store refuses to read, is
// named as a Problem. On a store whose ETags do not prove content (store.VerifyByHash: a
// local directory) every part is re-hashed too. Deep reads every part whole, re-hashes it and
// decodes every row with the Decoder of the manifest's format, so that a part whose rows,
// schema or strings a reader would not take is never certified: NDJSON's and lines' decoders
// are this package's, Parquet's and CSV's are registered by package export (RegisterDecoder),
// and a part no linked decoder can read is not certified.
//
// A prefix without a manifest is one of three, never certified: nothing at all
// (ProblemPrefixEmpty: a wrong date, run id or prefix); parts export names without a manifest
// (ProblemRunUnfinished: a run killed before it wrote one); anything else, a legacy run
// (ProblemNoManifest, Validation.LegacyRun: Spark's empty _SUCCESS, files put there by hand),
// which unlike the other two is not a failure for a CLI. A prefix that cannot be read (a
// missing bucket, no access) is ErrVerifyManifestRead, never a legacy run; a readable prefix
// that is not certified is a Validation with its problems and a nil error, and
// Validation.NotCertified turns it into ErrNotCertified. Validation.PartURLs lists exactly
// the certified run's parts, and no earlier run's beside them.
//
// # Errors
//
// ErrVerifyManifestRead and ErrNotCertified, each with its WHARF_… code; a store failure
// inside keeps its own kind reachable with errors.Is.
package dataset
