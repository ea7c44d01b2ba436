// Package icebird reads Apache Iceberg tables with icebird, the JavaScript Iceberg reader
// (npm icebird 0.3.1, which reads Parquet with hyparquet 1.19.0 and decompresses with
// hyparquet-compressors 1.1.1: zstd by fzstd, snappy by hysnappy, all installed by npm with
// it), so that tests can prove that the tables package iceberg commits are readable by a
// reader other than iceberg-go. Tests only: it runs node.
//
// Read runs an embedded node script (read.mjs) that calls icebird's icebergMetadata and
// icebergRead on the table and prints its row count, each column's count of non-null values
// and checksum, and, when asked, every value in canonical form. FromArrow computes the same
// from Arrow data (the rows a test wrote, or iceberg-go's scan), and Compare names every
// difference between the two.
//
// # How icebird reaches the table
//
// icebird fetches every file by URL with fetch, and turns an s3:// location into
// https://BUCKET.s3.amazonaws.com/KEY; it has no option for another endpoint, and the
// request options it takes reach the metadata and data files but not the manifest list or
// the manifests. So the script replaces globalThis.fetch: a folder table (file://) is served
// by an HTTP server on 127.0.0.1 for the duration of Read, and a table on a store that
// presigns (s3://, gs://, az://) is read by a presigned URL of each of its objects, from the
// store's own endpoint. A fetch of anything else fails the read.
//
// # Canonical forms
//
// A value's canonical form is a text, by its Iceberg type:
//
//	boolean              true, false
//	int, long            base 10, no leading zeros: -42
//	float, double        the 16 lowercase hex digits of the value's IEEE 754 binary64 bits
//	                     (a float widened first): 0.25 is 3fd0000000000000, -0 is 8000000000000000
//	decimal(P, S)        the unscaled value in base 10 with a point before its last S digits,
//	                     at least one digit before it: -0.05, 123.40
//	date                 days since 1970-01-01, base 10
//	time                 microseconds since midnight, base 10
//	timestamp(tz)        microseconds since 1970-01-01T00:00:00Z, base 10
//	string               the string itself
//	binary, fixed        the bytes in lowercase hex
//	uuid                 lowercase hex in 8-4-4-4-12 groups
//
// Nested types have none (Read and FromArrow fail). A value's hash is the first 8 bytes of
// the SHA-256 of its canonical form's UTF-8, big-endian; a column's checksum is the sum of
// its non-null values' hashes modulo 2^64, so no row order changes it. Both sides compute
// these from exact values (BigInt, IEEE bits, integers), never from a float's decimal text.
//
// # What icebird 0.3.1 cannot do
//
// These hold for the pinned versions; TestIcebirdDeflateManifests, TestIcebirdEmptyTable and
// TestIcebirdLimits fail when they change.
//
//   - It cannot read the manifests and manifest lists iceberg-go writes: they are Avro with
//     the deflate codec (iceberg-go fixes it), and hyparquet-compressors' gunzip fails on
//     the empty stored block Go's compress/flate ends every stream with ("RangeError: offset
//     is out of bounds"). So a table as package iceberg commits it is not readable by
//     icebird. The tests read the rest of the table all the same by first rewriting those
//     files with the null codec (RecodeManifests), and say so.
//   - It reads the version metadata/version-hint.text names and never looks further: a hint
//     that lags (package iceberg allows it) gives an older version. Without a hint it lists
//     an s3:// table's bucket at https://BUCKET.s3.amazonaws.com (anonymously) and takes the
//     metadata file last modified; any other table fails.
//   - A table without a snapshot ("No current snapshot id found in table metadata") or whose
//     current snapshot has no data files ("No data manifest files found for current
//     snapshot") is an error, not an empty table.
//   - Timestamps come back as JavaScript Dates: microseconds are truncated toward zero to
//     milliseconds.
//   - Decimals come back as JavaScript numbers (float64): exact only while the unscaled
//     value is below 2^51 (the script recovers it by rounding); decimal(18, 2) loses cents
//     beyond about ±2.2·10^13.
//   - Binary columns come back as text decoded from UTF-8: bytes that are not UTF-8 become
//     U+FFFD.
//   - Snapshot ids are parsed as JavaScript numbers (exact only below 2^53); format version 3
//     tables and deletion vectors are not read (icebird's README).
package icebird
