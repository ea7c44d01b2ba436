// Package iceberg commits Apache Iceberg tables to any wharf store, with the bucket as the
// catalog: no catalog server, only the store's create-if-absent conditional write. A table
// can instead be kept in a SQL catalog (Catalog, Options.Catalog: the tables of Iceberg's
// JDBC catalog in PostgreSQL or SQLite), whose UPDATE … WHERE metadata_location = the one
// read is the compare-and-set; its metadata files are then named 00001-<uuid>.metadata.json,
// … and no version hint is written.
//
// # Layout
//
// A table lives at a location, the URL a *store.Store is opened at. Its metadata files are
// metadata/v1.metadata.json, v2, … (N = 1, 2, …, as the Iceberg spec's file-system tables
// name them), its manifests and manifest lists are beside them in metadata/, and its data
// files are Parquet files anywhere below the location (conventionally data/). The current
// version is the highest N that exists; metadata/version-hint.text names a recent one for
// readers that start from it.
//
// # What a commit promises
//
// A commit (Create, Append, Overwrite, Commit) reads the version N it builds on, lets iceberg-go
// write the new snapshot's manifests and manifest list and apply the change to version N's
// metadata (table.UpdateTableMetadata over the transaction's updates), and creates
// metadata/v{N+1}.metadata.json only if absent (store.PutOptions.IfNoneMatch). The file name
// is the compare-and-set: of writers building on N, exactly one creates v{N+1}; each other
// is refused, reads the winner, stages its change again on top of it (an append re-reads
// its files' footers and checks them against the winner's files; an overwrite replaces the
// winner's files too) and tries v{N+2}, after a jittered wait, up to Options.Attempts times,
// then fails with ErrCommitConflict having committed nothing. So the history is linear: each
// snapshot's parent is the snapshot before it, and no committed change is lost. A lost
// answer to the create is settled by its wharf-put-id (store.ResolvePut). After a commit the
// version hint is put unconditionally; it may lag, never lead, so readers search upward
// from it (a HEAD of each next version) and fall back to a listing of metadata/. A writer
// may load with Options.FromHint, taking the hint's version without the HEAD: its create
// finds a newer version all the same, and the retry reads the table in full.
//
// This holds only on a store that enforces create-if-absent: one `wharf probe` proves cas.
// Package iceberg does not check that itself; its callers must, as leases do.
//
// What a crash leaves: data files and manifests written for a commit that did not create
// its metadata file are unreferenced (readers never see them); the table stays at the
// version before. A commit that loses a race (or fails to stage its change) deletes the
// manifests and manifest list that attempt wrote, which no metadata file names, before it
// tries again; only a crash leaves them. A crash after the create and before the hint leaves the hint one version
// behind, which readers step over; the next writer to load the table puts it right.
//
// # Reading
//
// FileIO is iceberg-go's file IO over the store: iceberg-go's own scan reads the table
// through it (Table.Iceberg().Scan()). Small files are read whole, large ones by ranged gets
// pinned to their ETag.
//
// # Errors
//
// ErrCommitConflict (the attempts were spent), ErrNoTable (no metadata at the location),
// ErrTableExists (Create over a table), ErrOutsideTable (a file not below the table's
// location), ErrMetadataInvalid (metadata that does not parse or apply); a store failure
// keeps its store kind (errors.Is with store.ErrNotExist, store.ErrUnavailable…).
package iceberg
