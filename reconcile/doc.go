// Package reconcile compares a certified export run with its source, chunk by chunk: what
// `wharf reconcile` runs.
//
// # What it promises
//
// Run reads the run's manifest at the prefix (package dataset: the prefix must validate,
// but for problems with single parts, whose chunks are then unknown) and, for every part it
// lists, queries the source once (export.Figures) with the WHERE clause the part's chunk was
// read with: its range of the chunking key and, for a delta run, the run's cursor window as
// the manifest records it. It asks COUNT(*) and, for every column of the manifest's schema,
// its non-null count and, for a column whose order compares exactly with Parquet's
// statistics (export.Order: integers; floats; decimals at their scale; text in byte order,
// PostgreSQL text and varchar of a UTF8 or LATIN1 database and SQLite TEXT affinity; a
// PostgreSQL date or timestamp under infinity: refuse), its MIN and MAX. On a PostgreSQL table,
// a column declared NOT NULL is not counted (its non-null count is the row count, by the
// constraint; only on an ordinary table without inheritance children or partitions) and the chunk key's MIN and MAX come from its index where one leads with it;
// both figures are compared as the others. It compares them with the
// part's figures read from its Parquet footer only (row count, and per column chunk the
// statistics' null count, min and max; no data page is read), and classifies the chunk:
//
//   - match: every figure compared is equal;
//   - mismatch: some figure differs, each named (rows, "column X non-null", "column X min",
//     "column X max", "column X: not in the source");
//   - unknown: the part is missing or unreadable, or its footer has no statistics for a
//     figure, so nothing could be compared for it; the reason is given.
//
// A figure that cannot be compared exactly is not compared and is named in the chunk's
// NotCompared: min and max of every other column (SQLite's dates and timestamps, whose text
// or unit differ from Parquet's; the text of a uuid, json, enum, char(n) or unconstrained
// numeric, whose order is not its text's), of a float column holding NaN in the source (Parquet
// statistics leave NaN out), a text min or max the footer leaves out (too long for the
// writer's statistics), the figures of a nested column, the non-null count of a date or timestamp
// column under infinity: null, and every column figure of a part that is not Parquet (its
// row count comes from the manifest). A delta run whose manifest records no cursor window is not queried: every
// chunk is unknown, and the report says why.
//
// Run never writes: not to the prefix, not to the journal. It reads the source as it is now,
// outside any snapshot: a source changed since the run is the expected cause of a mismatch,
// and the report carries the consistency mode the run was read with. Recording the verdict
// is the journal's owner's: `wharf reconcile` hands it to export.History.RecordVerification,
// which keeps it as the run's last verification in a local state file (not under bucket
// state), and `wharf runs` shows it.
//
// # Options
//
// Options name the export (as its config section prepared it), the prefix URL, the store
// options of the prefix, and the environment the source's URL is resolved with.
//
// # Errors
//
// ErrRefused: the prefix is not a certified run of this export, or the export's definition is
// not the run's. ErrMismatch: the report holds a chunk that is not a match (Report.Err). A
// source or store failure keeps its own code (package export's, package store's).
package reconcile
