// Package export writes database tables (SQLite, PostgreSQL) to object storage as verified
// datasets: Parquet (zstd), NDJSON or CSV parts, then manifest.json, then _SUCCESS, at a
// prefix of any store, as package dataset's contract says. dataset.Validate certifies such a
// prefix without touching the source (export registers its Parquet and CSV decoders for a
// deep validation, dataset.RegisterDecoder); a run journal in a SQLite state file records
// runs, per-chunk progress and delta cursors, so that an interrupted run resumes chunk by
// chunk, and each run's last verification (History.RecordVerification: a reconcile or a
// validation made after the run, which History.Runs returns with it).
//
// # What a run promises
//
// Rows are read over ranges of a chunking key (an integer or timestamp column; rows whose key
// is NULL form one more chunk), Options.Parallel chunks in flight, each streamed through a
// pipe into store.Put in record batches of Options.BatchRows rows (or 8 MiB of values), so
// memory is bounded by the batch and one Parquet row group (64 Ki rows or 32 MiB of pages)
// per chunk in flight, whatever the table's size and the width of its rows. Each
// chunk is one part, named part-<run_id>-<chunk>.<ext>: a resume rewrites the same key, and
// a later run's parts land beside an earlier run's, never over them. The chunk plan is made
// while chunks are written, one range ahead of them, and each range is journaled before its
// chunk starts; a resume keeps the journaled ranges and plans the rest after them.
//
// The trust contract at the resolved prefix:
//
//   - M1: parts are written before manifest.json, and manifest.json before _SUCCESS.
//   - M2: _SUCCESS holds the hex sha256 of manifest.json's exact bytes.
//   - M3: the manifest lists every part of the run (key, size, rows, sha256, the store's ETag,
//     its key range), the schema and its fingerprint, run id, export, timings, status, the
//     delta window, wharf's version; the source only by host or file, never a credential.
//   - M4: a run that fails before its first write leaves the prefix as it was, except that a
//     prefix with no manifest yet gets a failed manifest with no parts (and no _SUCCESS). The
//     first write of a run removes _SUCCESS; a run that wrote and then failed writes a failed
//     manifest naming the parts it wrote.
//   - M5–M7: dataset.Validate reads _SUCCESS and manifest.json, compares the marker with the manifest's
//     hash and the manifest with itself (fingerprint, row total), and HEADs every part: a
//     deleted, truncated or rewritten part (another size or ETag), or one the store refuses to
//     read, is named. On a store whose ETags do not prove content (store.VerifyByHash: a local
//     directory, where a part edited in place with its time put back keeps its ETag) every
//     part is re-hashed too. Deep reads every part whole, re-hashes it and decodes every row
//     as a reader would, so a part whose rows, schema or strings (UTF-8) a reader would not
//     take is never certified. A prefix without a manifest that holds other objects is a
//     legacy run (also a Spark/Hadoop empty _SUCCESS), never certified, and not a failure
//     for a CLI; one holding nothing, or only wharf's parts of a run killed before its
//     manifest, is not a legacy run. A prefix that cannot be read (a missing bucket) is
//     dataset.ErrVerifyManifestRead, never legacy.
//   - M8: Resume on a prefix holding _SUCCESS is refused with ErrDestAlreadyComplete, unless
//     the journal's last run of the export did not succeed, or Force.
//   - M9: a resume continues the interrupted run (same run id, prefix, chunk plan and delta
//     window), and only when the export's Definition (source as it connects, table or query, chunk
//     key, mode, cursor column, format, value options) is the one journaled with the run; another is
//     refused with ErrDefinitionChanged before anything is opened or written. It decides per
//     chunk: skip a committed part still at its size and ETag (and, where ETags do not prove
//     content, its sha256); rewrite a chunk pending, in progress or whose part is gone, first
//     aborting the incomplete upload a killed run left at its key; quarantine an object where
//     a part belongs that the journal does not vouch for (copied verbatim to
//     _quarantine/<run_id>/<key>, then deleted; never a plain delete), then rewrite it.
//
// Earlier runs' parts stay at the prefix; dataset.Validation.PartURLs lists exactly a certified run's,
// and Export.Superseded = SupersededMove moves the others under _superseded/<run_id>/ once a
// run is certified, for readers of a whole directory. A configuration error (ConfigError) ends
// a run before it is journaled, with nothing written; a destination that keeps nothing
// (standard output) is one. CSV parts keep NULL (an unquoted empty field) apart from empty
// text and empty bytes (""), as PostgreSQL's CSV does.
//
// # State in the bucket
//
// With Options.StatePath StateBucket (the config's state: bucket) the journal, chunk progress
// and delta cursor live in the export's commit log below its destination's fixed part
// (StateRoot), under a writer lease named after the export (package lease): a run that finds
// the lease held fails *lease.HeldError and writes nothing; a run that is fenced past writes
// nothing more. A succeeded run is committed to the log, with its manifest's sha256, before
// the manifest is written; the manifest names that entry (Manifest.Log), and dataset.Validate
// certifies a logged manifest only when the log records it. A verification is not recorded
// there (History.RecordVerification records nothing under StateBucket).
//
// # Consistency
//
// With Export.Consistency ConsistencySnapshot (the default) a run plans and reads every chunk
// from one snapshot of the source (PostgreSQL: a REPEATABLE READ transaction held for the run,
// whose exported snapshot every chunk's connection imports; SQLite: one read transaction), so
// every row is in the dataset exactly once, as it was at that instant; with ConsistencyChunk
// each chunk is read in its own transaction, and a row whose chunk key changes during the run
// can be in two chunks or none. The manifest records which (Manifest.Consistency, with the
// PostgreSQL snapshot), and says snapshot only when every part was read from the run's one
// snapshot: a resumed snapshot run, whose earlier attempt's snapshot is gone, says chunk.
//
// In delta mode a run exports rows whose cursor column is past the cursor of the last
// successful run and at most the cursor's largest value when the run started; the cursor
// advances only when the run succeeds, in the same transaction that journals the success. A
// row that commits late is never skipped: on PostgreSQL a run waits (Export.DeltaWait) for the
// transactions open when it read the largest value before it takes the snapshot it reads, and
// one still open holds the window back (CursorWindow.Held); SQLite's one writer at a time
// cannot commit a value below one already committed. On both, the rows at a largest value
// that repeats (a date; a timestamp to the second, CURRENT_TIMESTAMP; a PostgreSQL
// timestamp(p) with p < 6) wait for a later run until the source's clock is past it.
//
// # Iceberg tables
//
// With Export.Iceberg (iceberg: in the config) every certified run is committed to an Apache
// Iceberg table whose catalog is the bucket (package iceberg), at TableLocation: a full run's
// parts replace the table's data files, a delta run's are appended, one snapshot per run
// carrying its run id (wharf.run-id), committed after _SUCCESS, so a snapshot names only
// certified parts. Before its first part a run opens the table on a store the probe proved
// cas (else WHARF_COORDINATION_UNPROVEN) and checks the table can take its columns (a new
// column evolves the schema at the commit; any other change is iceberg.ErrSchemaChanged). The
// statistics come from the footers the run wrote, so no part is read back. A run the table
// holds is never committed again; a delta export's run first commits the certified runs since
// the table was created that the table lacks (a run stopped between its _SUCCESS and its
// commit). A run certified but not committed returns its error with the Result. CommitRepair
// puts a repair's new parts in place of those they supersede. With TableConfig.Catalog the
// table is kept in a SQL catalog (PostgreSQL or SQLite) as namespace.name, and its store
// need not be proven cas: the database makes each commit's compare-and-set. A full run never
// replaces the files of a run that started after it (wharf.run-started orders them).
//
// # Types
//
// Every value is written exactly or refused by name: a value that does not fit its column's
// type exactly stops the run with ErrValueRefused and a *ValueError naming the column, the row
// (its chunking key) and the value, and the reason; nothing is rounded, truncated, wrapped or
// guessed. Integers keep their width; float4/float8 and REAL are floats; numeric(p,s) and
// DECIMAL(p,s) with p ≤ 38 are decimal128(p,s) (a value with more digits is refused), an
// unconstrained or wider numeric is its exact text (never a float); money is a decimal at its
// currency's scale; text is utf8 and must be UTF-8 (Export.InvalidUTF8 may write a column
// holding other bytes as binary instead, decided before the first part); bytea/BLOB binary;
// boolean bool (SQLite: 0 or 1); date date32; timestamp a microsecond timestamp (timestamptz
// and SQLite's TIMESTAMPTZ in UTC), refused past the microseconds an int64 holds; PostgreSQL's
// ±infinity follow Export.Infinity; SQLite dates and timestamps are ISO-8601 text, or numbers
// in the unit Export.TimeUnits states for the column (never guessed); uuid the arrow.uuid
// extension (Parquet UUID), json/jsonb the arrow.json extension (a string with the Parquet
// JSON logical type). Other PostgreSQL types are written as their text, in a session whose
// settings (DateStyle, IntervalStyle, TimeZone, extra_float_digits, client_encoding,
// lc_monetary) every connection pins and the manifest records. Every column is nullable and
// NULLs are kept. docs/export.md has the table for both sources.
//
// # Errors
//
// Failures are *Error values whose kind is one of ErrConfig, ErrSourceUnavailable,
// ErrSourceNotFound, ErrChunkKey, ErrSourceRead, ErrValueRefused, ErrSchemaChanged, ErrWrite,
// ErrState, ErrDestAlreadyComplete and ErrDefinitionChanged (each with a WHARF_… code that
// errcode.Of finds; validation's codes are package dataset's); a store failure inside keeps
// its own kind reachable with errors.Is. Messages name the table, column, row, value, host,
// file or key at fault, never a password; a full disk under a file destination names the file
// and the disk. A cancelled context passes through.
package export
