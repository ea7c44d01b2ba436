package reconcile

import "github.com/wharfdata/wharf/errcode"

const section = "Reconcile"

// The kinds of reconcile failures, each an *errcode.Code.
var (
	// ErrMismatch: the reconcile ran, and some chunk is not a match (a mismatch, or unknown).
	ErrMismatch = errcode.New(errcode.Def{Name: "WHARF_RECONCILE_MISMATCH", Text: "the dataset does not match its source",
		Exit: errcode.ExitFailed, Class: errcode.Outcome, Section: section,
		Meaning: "`wharf reconcile` compared every chunk of a certified run with its source, and at least one chunk is `mismatch` (a figure differs: rows, a column's non-null count, min or max) or `unknown` (its part is missing or unreadable, or its statistics are absent). The report names each chunk and figure. A source changed since the run is the expected cause of a mismatch.",
		Remedy:  "Read the report: a source that changed since the run needs a new run (or a repair of the named chunks); an unknown chunk's part needs to be restored or re-exported."})
	// ErrRefused: the run cannot be reconciled at all: the prefix is not a certified run of
	// the export, or the export's definition changed since the run.
	ErrRefused = errcode.New(errcode.Def{Name: "WHARF_RECONCILE_REFUSED", Text: "the run cannot be reconciled",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Section: section,
		Meaning: "`wharf reconcile` did not query the source: the prefix holds no certified run of this export (no manifest or `_SUCCESS`, a manifest of another export, a failed run), or the export's definition (source, table or query, chunk key, mode, cursor column, format, value options) is not the one the run was made to, so its chunks' SQL is not known. The message says which.",
		Remedy:  "Reconcile the prefix with the config it was exported with, or validate it (`wharf validate`) to see why it is not certified."})
)
