package export

import (
	"errors"
	"fmt"

	"github.com/wharfdata/wharf/errcode"
)

const section = "Export"

// The kinds of export failures, each an *errcode.Code.
var (
	// ErrConfig: an Export's options are invalid (no source, both table and query…).
	ErrConfig = errcode.New(errcode.Def{Name: "WHARF_EXPORT_CONFIG_INVALID", Text: "invalid export options",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Section: section,
		Meaning: "An export's options are invalid (no source, both a table and a query…). The message names the option.",
		Remedy:  "Fix the export configuration."})
	// ErrChunkKey: the chunking key (or cursor column) is not an integer or timestamp column.
	ErrChunkKey = errcode.New(errcode.Def{Name: "WHARF_CHUNK_KEY_INVALID", Text: "chunking key must be an integer or timestamp column",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Section: section,
		Meaning: "The chunking key or cursor column is not an integer or timestamp column.",
		Remedy:  "Choose an integer or timestamp column as the chunking key."})
	// ErrSourceUnavailable: the source cannot be opened or reached, or refused the login.
	// The message names the host or file, never a password.
	ErrSourceUnavailable = errcode.New(errcode.Def{Name: "WHARF_SOURCE_UNAVAILABLE", Text: "source unavailable",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: section,
		Meaning: "The source database cannot be opened or reached, or refused the login. The message names the host or file, never a password.",
		Remedy:  "Check the source URL, network and credentials."})
	// ErrSourceNotFound: the table, or a column the export names, does not exist.
	ErrSourceNotFound = errcode.New(errcode.Def{Name: "WHARF_SOURCE_NOT_FOUND", Text: "table or column not found",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Section: section,
		Meaning: "The table, or a column the export names, does not exist in the source.",
		Remedy:  "Check the table and column names against the source."})
	// ErrSourceRead: the source failed while a chunk was read, or a value did not convert.
	ErrSourceRead = errcode.New(errcode.Def{Name: "WHARF_SOURCE_READ_FAILED", Text: "reading the source failed",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: section,
		Meaning: "The source failed while a chunk was read, or a value did not convert.",
		Remedy:  "Check the source; a resumed run redoes only the unfinished chunks."})
	// ErrWrite: writing a part, the manifest or _SUCCESS failed (the store error is wrapped too).
	ErrWrite = errcode.New(errcode.Def{Name: "WHARF_EXPORT_WRITE_FAILED", Text: "writing the export failed",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: section,
		Meaning: "Writing a part, the manifest or `_SUCCESS` failed; the store error is part of the message.",
		Remedy:  "See the store code in the message; resume the run."})
	// ErrState: the state file (journal, chunk progress, cursors) cannot be opened or written.
	ErrState = errcode.New(errcode.Def{Name: "WHARF_STATE_ERROR", Text: "state file error",
		Exit: errcode.ExitFailed, Class: errcode.Operator, Section: section,
		Meaning: "The state file (run journal, chunk progress, cursors) cannot be opened or written.",
		Remedy:  "Check the state file's path, permissions and free space."})
	// ErrDestAlreadyComplete: --resume on a prefix that holds _SUCCESS, when the journal's last
	// run of the export did not fail and Force is not set.
	ErrDestAlreadyComplete = errcode.New(errcode.Def{Name: "WHARF_DEST_ALREADY_COMPLETE", Text: "destination already holds a complete export",
		Exit: errcode.ExitComplete, Class: errcode.Outcome, Section: section,
		Meaning: "A resume was asked on a prefix that already holds a complete export (`_SUCCESS`), and the last run did not fail.",
		Remedy:  "Nothing to do; `--resume --force` writes it again."})
	// ErrDefinitionChanged: --resume of a run whose definition (source, table or query, chunk
	// key, mode, cursor column, format, value options) is not the export's now.
	ErrDefinitionChanged = errcode.New(errcode.Def{Name: "WHARF_EXPORT_DEFINITION_CHANGED", Text: "the export's definition changed since the run started",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Section: section,
		Meaning: "A `--resume` was refused: the export's definition (its `source`, `table` or `query`, `chunk_key`, `mode`, `cursor_column`, `format`, `invalid_utf8`, `time_units` or `infinity`) is not the one journaled with the run it would continue, so its kept chunk plan, parts and schema belong to another export. The message names the keys that changed. Nothing was journaled or written.",
		Remedy:  "Run the export without `--resume` (a new run of the export as now defined), or restore the config to resume the run."})
	// ErrValueRefused: a source value cannot be written exactly as its column's type (text
	// that is not UTF-8, a timestamp whose unit is not stated, a number that does not fit its
	// decimal, an infinite date…). The message names the table, the column, the row's chunk
	// key and the value; errors.As finds a *ValueError with the reason.
	ErrValueRefused = errcode.New(errcode.Def{Name: "WHARF_EXPORT_VALUE_REFUSED", Text: "a value cannot be written exactly",
		Exit: errcode.ExitFailed, Class: errcode.Poison, Standing: true, Section: section,
		Meaning: "A value cannot be written exactly as its column's type, and was not rounded, truncated or guessed: text that is not UTF-8, a number in a date or timestamp column without a unit in `time_units`, a timestamp out of the microsecond range, an infinite date under `infinity: refuse`, a decimal with more digits than its column keeps, a boolean other than 0, 1, true, false. The message names the table, the column, the row's chunk key, the value and why ([export.md](export.md#types)). Parts already written are listed in a failed manifest.",
		Remedy:  "Fix the value in the source, or state what it means (`time_units`, `infinity`, `invalid_utf8: binary`), or convert it in a `query:`; then run again."})
	// ErrSchemaChanged: a resumed run's source columns are not those the interrupted run
	// wrote its parts with (a column added, dropped or retyped since).
	ErrSchemaChanged = errcode.New(errcode.Def{Name: "WHARF_EXPORT_SCHEMA_CHANGED", Text: "the source's columns changed since the run",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Standing: true, Section: section,
		Meaning: "A `--resume`, or a `wharf repair`, found the source's columns changed since the run wrote its first parts (a column added, dropped or retyped): the new parts would not share the run's schema. The message names the column.",
		Remedy:  "Run the export again without `--resume` (for a repair: export a new run)."})
)

// newErr returns an export failure: what was being done, on what (the table, column, host,
// key or file), the kind and the cause. It unwraps to both the kind and the cause (a store
// error keeps its own kind reachable).
func newErr(op, what string, kind *errcode.Code, cause error) error {
	return errcode.E(op, what, kind, cause)
}

// The reasons a value is refused: a *ValueError unwraps to one of them.
var (
	ErrNotUTF8    = errors.New("not valid UTF-8")
	ErrInexact    = errors.New("does not fit the column's type exactly")
	ErrNoTimeUnit = errors.New("a number in a date or timestamp column needs its unit in time_units")
	ErrBadTime    = errors.New("not an ISO-8601 date or timestamp")
	ErrOutOfRange = errors.New("out of the column type's range")
	ErrInfinite   = errors.New("infinite date or timestamp (see the infinity option)")
	ErrWrongType  = errors.New("not a value of the column's type")
	ErrBadValue   = errors.New("malformed value")
)

// ValueError is a value refused by name: the column, the row (its chunk key) and the value.
type ValueError struct {
	Column string // the column's name
	Row    string // the row's chunk key, as text ("NULL" for the NULL-key chunk)
	Value  string // the value, quoted or in hex, shortened when long
	Reason error  // one of ErrNotUTF8, ErrInexact, ErrNoTimeUnit, …
	Detail string // what exactly, when the reason alone does not say
}

func (e *ValueError) Error() string {
	s := fmt.Sprintf("column %q, row with key %s: value %s: %v", e.Column, e.Row, e.Value, e.Reason)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the reason.
func (e *ValueError) Unwrap() error { return e.Reason }

// ConfigError reports whether err is a configuration error: one that running again unchanged
// meets again, found before anything was attempted (its code's exit class is the CLI's 2). A run that ends with one
// is not journaled and writes nothing at the prefix: an export's invalid options or chunk key,
// a store URL or credential refused before any connection.
func ConfigError(err error) bool {
	if err == nil {
		return false
	}
	c := errcode.Of(err)
	return c != nil && c.Exit() == errcode.ExitUsage
}
