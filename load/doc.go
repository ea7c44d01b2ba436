// Package load puts a certified export run into a PostgreSQL table: what `wharf load` runs.
//
// # What it promises
//
// Run loads the run at a prefix only when the prefix is certified (package dataset; with
// Options.Deep every part is re-read and decoded first). It never connects to the export's
// source: the table's columns come from the manifest's schema, through one type table (Types)
// from the manifest's Arrow types to PostgreSQL's, exact for every type export writes; a
// column of any other type, or a part that is not Parquet, is refused by name before
// anything is written. It reads exactly the parts the manifest lists (never a listing), each
// checked against the manifest's size and sha256 as it is read, and streams their rows
// through one COPY … FROM STDIN (FORMAT binary) (pgconn's CopyFrom), encoded from the Arrow
// columns straight into PostgreSQL's binary format.
//
// Everything happens in one PostgreSQL transaction, which also writes a row of the load
// ledger (export, run id, manifest sha256, table, mode, rows): so a crash or a failure at any
// point leaves the table and the ledger as they were, and a rerun does the whole load again;
// a run the ledger records as loaded into the table, with the same manifest, is not loaded
// again (Result.Loaded false) — for replace, only while it is the table's last load, since a
// later replace took its rows out; a run older than the newest one loaded into the table from the
// same export, or one loaded before with another manifest, is refused unless
// Options.Force. Loads of one table are serialised by an advisory lock on the table's name.
//
// The modes:
//
//   - replace: the table is truncated, then the rows are copied into it; a reader waits
//     for the commit (TRUNCATE takes the table's exclusive lock for the transaction) and
//     then sees the new rows;
//   - append: the rows are copied into the table itself; they are seen at the commit;
//   - merge: the rows are copied into a staging table, then MERGEd on the key columns: a row
//     whose key is in the table replaces it, any other is inserted. Two rows of the run with
//     one key are refused.
//
// A dataset of records (a backfill's store sink, format lines) loads into one jsonb column,
// RecordColumn, one row a record; or, with Target.Columns, into the columns named, each taken
// from every record's field of its name by PostgreSQL (its JSON value, or its text cast to one
// of RecordTypes by the type's input function) from a staging table the records are copied
// into as they are: a record that is not a JSON object is refused, a value not of its column's
// type fails the load, and either way nothing is loaded.
//
// A missing table is created with the type table's columns (and, for merge, a primary key of
// the key columns); an existing one must have every column of the manifest with the type the
// table gives (it may have more, which are left to their defaults).
//
// # Errors
//
// ErrConfig: the target's options are invalid. ErrRefused: nothing was loaded, because the
// run is not certified, holds a type or format load does not take, does not fit the existing
// table, or the ledger says it must not be loaded. ErrTarget: PostgreSQL could not be reached
// or failed the load; the transaction was rolled back. A store failure keeps its own code.
// No error, log line or ledger row ever holds the password.
package load
