package export

import (
	"github.com/wharfdata/wharf/errcode"
)

const section = "Export"

// The kinds of export failures, each an *errcode.Code.
var (
	// ErrConfig: an Export's options are invalid (no source, both table and query…).
	ErrConfig = errcode.New(errcode.Def{Name: "WHARF_EXPORT_CONFIG_INVALID", Text: "invalid export options",
		Exit: errcode.ExitUsage, Section: section,
		Meaning: "An export's options are invalid (no source, both a table and a query…). The message names the option.",
		Remedy:  "Fix the export configuration."})
	// ErrChunkKey: the chunking key (or cursor column) is not an integer or timestamp column.
	ErrChunkKey = errcode.New(errcode.Def{Name: "WHARF_CHUNK_KEY_INVALID", Text: "chunking key must be an integer or timestamp column",
		Exit: errcode.ExitUsage, Section: section,
		Meaning: "The chunking key or cursor column is not an integer or timestamp column.",
		Remedy:  "Choose an integer or timestamp column as the chunking key."})
	// ErrSourceUnavailable: the source cannot be opened or reached, or refused the login.
	// The message names the host or file, never a password.
	ErrSourceUnavailable = errcode.New(errcode.Def{Name: "WHARF_SOURCE_UNAVAILABLE", Text: "source unavailable",
		Exit: errcode.ExitFailed, Section: section,
		Meaning: "The source database cannot be opened or reached, or refused the login. The message names the host or file, never a password.",
		Remedy:  "Check the source URL, network and credentials."})
	// ErrSourceNotFound: the table, or a column the export names, does not exist.
	ErrSourceNotFound = errcode.New(errcode.Def{Name: "WHARF_SOURCE_NOT_FOUND", Text: "table or column not found",
		Exit: errcode.ExitFailed, Section: section,
		Meaning: "The table, or a column the export names, does not exist in the source.",
		Remedy:  "Check the table and column names against the source."})
	// ErrSourceRead: the source failed while a chunk was read, or a value did not convert.
	ErrSourceRead = errcode.New(errcode.Def{Name: "WHARF_SOURCE_READ_FAILED", Text: "reading the source failed",
		Exit: errcode.ExitFailed, Section: section,
		Meaning: "The source failed while a chunk was read, or a value did not convert.",
		Remedy:  "Check the source; a resumed run redoes only the unfinished chunks."})
	// ErrWrite: writing a part, the manifest or _SUCCESS failed (the store error is wrapped too).
	ErrWrite = errcode.New(errcode.Def{Name: "WHARF_EXPORT_WRITE_FAILED", Text: "writing the export failed",
		Exit: errcode.ExitFailed, Section: section,
		Meaning: "Writing a part, the manifest or `_SUCCESS` failed; the store error is part of the message.",
		Remedy:  "See the store code in the message; resume the run."})
	// ErrState: the state file (journal, chunk progress, cursors) cannot be opened or written.
	ErrState = errcode.New(errcode.Def{Name: "WHARF_STATE_ERROR", Text: "state file error",
		Exit: errcode.ExitFailed, Section: section,
		Meaning: "The state file (run journal, chunk progress, cursors) cannot be opened or written.",
		Remedy:  "Check the state file's path, permissions and free space."})
	// ErrDestAlreadyComplete: --resume on a prefix that holds _SUCCESS, when the journal's last
	// run of the export did not fail and Force is not set.
	ErrDestAlreadyComplete = errcode.New(errcode.Def{Name: "WHARF_DEST_ALREADY_COMPLETE", Text: "destination already holds a complete export",
		Exit: errcode.ExitComplete, Section: section,
		Meaning: "A resume was asked on a prefix that already holds a complete export (`_SUCCESS`), and the last run did not fail.",
		Remedy:  "Nothing to do; `--resume --force` writes it again."})
	// ErrVerifyManifestRead: validate could not read the prefix (a missing bucket, no access,
	// the store unavailable). Never reported as a legacy run.
	ErrVerifyManifestRead = errcode.New(errcode.Def{Name: "WHARF_VERIFY_MANIFEST_READ_ERROR", Text: "cannot read the manifest",
		Exit: errcode.ExitFailed, Section: section,
		Meaning: "Validation could not read the prefix (a missing bucket, no access, the store unavailable). Never reported as a legacy run.",
		Remedy:  "Fix access to the prefix and validate again."})
	// ErrNotCertified: validate read the prefix and it is not a certified export.
	ErrNotCertified = errcode.New(errcode.Def{Name: "WHARF_NOT_CERTIFIED", Text: "prefix is not a certified export",
		Exit: errcode.ExitFailed, Section: section,
		Meaning: "Validation read the prefix and it is not a certified export (no manifest, no `_SUCCESS`, or a part that does not match).",
		Remedy:  "Re-run the export, or treat the data as uncertified."})
)

// newErr returns an export failure: what was being done, on what (the table, column, host,
// key or file), the kind and the cause. It unwraps to both the kind and the cause (a store
// error keeps its own kind reachable).
func newErr(op, what string, kind *errcode.Code, cause error) error {
	return errcode.E(op, what, kind, cause)
}
