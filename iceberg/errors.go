package iceberg

import "github.com/wharfdata/wharf/errcode"

const section = "Iceberg"

// The kinds of table failures, each an *errcode.Code: test for them with errors.Is. A store
// failure underneath keeps its own kind too (the error unwraps to both).
var (
	// ErrCommitConflict: every attempt of a commit lost the race for the next metadata file.
	ErrCommitConflict = errcode.New(errcode.Def{Name: "WHARF_ICEBERG_COMMIT_CONFLICT", Text: "iceberg commit lost to other writers on every attempt",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: section,
		Meaning: "Each attempt to create the table's next metadata file (`metadata/v{N}.metadata.json`, created only if absent) found it already made by another writer; each time the change was rebased onto the winner and tried again, until the attempts were spent. Nothing of this commit is in the table. The message names the table and the attempts.",
		Remedy:  "Run again: the change is retried on top of the table as it is then. Many writers committing to one table at once should group their commits."})
	// ErrNoTable: no metadata file under the location.
	ErrNoTable = errcode.New(errcode.Def{Name: "WHARF_ICEBERG_NO_TABLE", Text: "no iceberg table at the location",
		Exit: errcode.ExitFailed, Class: errcode.Operator, Section: section,
		Meaning: "The location holds no `metadata/v1.metadata.json`: no table was created there (or it was made by a catalog that names its metadata files otherwise). The message names the location.",
		Remedy:  "Check the location; create the table first."})
	// ErrTableExists: Create found a table already there.
	ErrTableExists = errcode.New(errcode.Def{Name: "WHARF_ICEBERG_TABLE_EXISTS", Text: "an iceberg table already exists at the location",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Section: section,
		Meaning: "Creating a table found `metadata/v1.metadata.json` already there: another table (or another writer's create) is at this location. Nothing was written.",
		Remedy:  "Load the table instead, or choose another location."})
	// ErrOutsideTable: a file named outside the table's location.
	ErrOutsideTable = errcode.New(errcode.Def{Name: "WHARF_ICEBERG_OUTSIDE_TABLE", Text: "file outside the iceberg table's location",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Section: section,
		Meaning: "A file to read or write (a data file to add, a manifest the metadata names) is not below the table's location, and wharf reads and writes a table only through the store opened at it. The message names the file and the location.",
		Remedy:  "Write the data files below the table's location (its `data/` folder) before adding them."})
	// ErrMetadataInvalid: a metadata file or version hint that cannot be read as one.
	ErrMetadataInvalid = errcode.New(errcode.Def{Name: "WHARF_ICEBERG_METADATA_INVALID", Text: "iceberg table metadata is invalid",
		Exit: errcode.ExitFailed, Class: errcode.Poison, Section: section,
		Meaning: "A table metadata file does not parse as Iceberg table metadata, or names another location than the one it was found at, or a change could not be applied to it. The message names the file.",
		Remedy:  "Inspect the file with `wharf cat`; a table whose current metadata is damaged needs repair by hand."})
)

// ErrSchemaChanged: files whose schema the table's cannot take.
var ErrSchemaChanged = errcode.New(errcode.Def{Name: "WHARF_ICEBERG_SCHEMA_CHANGED", Text: "the files' schema does not fit the iceberg table's",
	Exit: errcode.ExitFailed, Class: errcode.Fatal, Section: section,
	Meaning: "The data files to commit were written with a schema the table's cannot take: a column the table has is missing from them, or has another type, or has no Iceberg type. A column only the files have is not this error: it is added to the table's schema. The message names each column and both types. Nothing was committed.",
	Remedy:  "Write the files with the table's columns (a new column is fine), or commit them to a new table (another location)."})

// ErrStaleCommit: a change refused because the table already holds a later one (Change.Guard).
var ErrStaleCommit = errcode.New(errcode.Def{Name: "WHARF_ICEBERG_STALE_COMMIT", Text: "the iceberg table already holds a later change",
	Exit: errcode.ExitFailed, Class: errcode.Fatal, Section: section,
	Meaning: "A full export run's overwrite found the table's current snapshot to be a later run's (one that started after it: a run that stalled between its _SUCCESS and its commit while another ran). Replacing it would put older rows back: nothing was committed. The run stays certified at its prefix. The message names both runs.",
	Remedy:  "Nothing to do: the table holds the later run. Run the export again for a newer one."})

// ErrCatalog: the SQL catalog (Catalog) could not be read or written.
var ErrCatalog = errcode.New(errcode.Def{Name: "WHARF_ICEBERG_CATALOG_FAILED", Text: "the iceberg SQL catalog failed",
	Exit: errcode.ExitFailed, Class: errcode.Transient, Section: section,
	Meaning: "A statement on the SQL catalog's database (PostgreSQL or SQLite: its `iceberg_tables` and `iceberg_namespace_properties`) failed: the database cannot be reached, refused the credentials, or refused the statement. The message names the catalog, the table and the database's answer (never its password). A commit whose UPDATE failed may or may not have moved the table: the next commit of the same change finds out.",
	Remedy:  "Check that the database is up and the catalog's `uri` and `password` are right; run again."})
