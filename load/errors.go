package load

import "github.com/wharfdata/wharf/errcode"

const section = "Load"

// The kinds of load failures, each an *errcode.Code.
var (
	// ErrConfig: a load target's options are invalid.
	ErrConfig = errcode.New(errcode.Def{Name: "WHARF_LOAD_CONFIG_INVALID", Text: "invalid load options",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Section: section,
		Meaning: "A `load:` entry or `wharf load`'s flags are invalid: no target, a target that is not `postgres://`, a password written into the URL, an unknown mode, merge without key columns, a table name that is not `name` or `schema.name`. The message names the option.",
		Remedy:  "Fix the option named (docs/export.md, \"wharf load\")."})
	// ErrRefused: nothing was loaded: the run is not certified, does not fit, or the ledger
	// forbids it.
	ErrRefused = errcode.New(errcode.Def{Name: "WHARF_LOAD_REFUSED", Text: "the run was not loaded",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Section: section,
		Meaning: "`wharf load` wrote nothing: the prefix holds no certified run of the export, or the run holds a column type or a format load does not take, or the existing table lacks a column or has another type for it, or the ledger records a newer run of the export loaded into the table, or this run loaded with another manifest, or a merge met two rows with one key. The message says which.",
		Remedy:  "Read the message: validate the prefix, fix the table, or load with --force when loading an older run (or a repaired one) again is what you mean."})
	// ErrTarget: PostgreSQL could not be reached or failed the load.
	ErrTarget = errcode.New(errcode.Def{Name: "WHARF_LOAD_TARGET_FAILED", Text: "the target database failed the load",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: section,
		Meaning: "`wharf load` could not connect to the target PostgreSQL, or a statement of the load failed there (a permission, a constraint, a full disk). The load's transaction was rolled back: the table and the ledger are as they were.",
		Remedy:  "Fix what the message names (the server's own error is quoted) and run the load again: it starts over and loads the run once."})
)
