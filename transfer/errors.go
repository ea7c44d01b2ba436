package transfer

import (
	"errors"

	"github.com/wharfdata/wharf/errcode"
)

const section = "Copies"

// The kinds of copy failures that are not the store's, each an *errcode.Code. Failures of a
// store keep the store's kinds (store.ErrNotExist…), and a local file that cannot be opened
// or read is store.ErrNotExist or store.ErrForbidden (LocalError).
var (
	// ErrLocalChanged: a local file being copied got shorter or longer than it was when its
	// copy began. The copy is never retried (the file would only be read again as it is now):
	// what was sent is discarded, and the error names the file.
	ErrLocalChanged = errcode.New(errcode.Def{Name: "WHARF_LOCAL_FILE_CHANGED", Text: "local file changed while it was copied",
		Exit: errcode.ExitFailed, Class: errcode.Poison, Standing: true, Section: section,
		Meaning: "A local file got shorter or longer while `cp` was reading it (another program was writing it, or truncated it). The copy is not retried: nothing is left at the destination (an upload in parts is aborted before it is committed), and the message names the file with its size when the copy began and what it found.",
		Remedy:  "Copy the file once it is complete (the program writing it has closed it), or copy a snapshot of it."})
	// ErrLinkBroken: a symbolic link whose target is missing, or that leads into a loop of
	// links. In a walk of a local directory it names one link passed over; given as the file
	// to copy, it is the copy's error.
	ErrLinkBroken = errcode.New(errcode.Def{Name: "WHARF_LINK_BROKEN", Text: "symbolic link does not resolve",
		Exit: errcode.ExitFailed, Class: errcode.Poison, Standing: true, Section: section,
		Meaning: "A symbolic link points at nothing (its target is missing) or into a loop of links (`too many levels of symbolic links`). In `cp -r` of a local directory each such link is named on standard error and passed over, the rest is copied, and `cp` exits 1 with `WHARF_COPY_INCOMPLETE`; given as the file to copy, it is the error.",
		Remedy:  "Fix or remove the link; `ls -l` shows where it points."})
	// ErrSpecialFile: a named pipe, socket or device met in a walk of a local directory,
	// which a recursive copy does not read (a pipe could block it forever).
	ErrSpecialFile = errcode.New(errcode.Def{Name: "WHARF_SPECIAL_FILE", Text: "not a regular file",
		Exit: errcode.ExitFailed, Class: errcode.Poison, Standing: true, Section: section,
		Meaning: "`cp -r` of a local directory met a named pipe, a socket or a device. It does not read them (a pipe could block the copy forever): each is named on standard error and passed over, the rest is copied, and `cp` exits 1 with `WHARF_COPY_INCOMPLETE`.",
		Remedy:  "Copy such a file on its own (`wharf cp ./pipe s3://b/k` reads a named pipe to its end), or leave it out."})
	// ErrIncomplete: a recursive copy passed over some of what it was asked to copy (each one
	// named with its own code as it was found) and copied the rest.
	ErrIncomplete = errcode.New(errcode.Def{Name: "WHARF_COPY_INCOMPLETE", Text: "not everything was copied",
		Exit: errcode.ExitFailed, Class: errcode.Outcome, Standing: true, Section: section,
		Meaning: "`cp -r` copied everything it could and passed over the rest, each named on standard error with its own code as it was found: a key that cannot be a local file name or a key (`WHARF_KEY_INVALID`: a `..`, `.` or empty segment, a non-empty object whose key ends in `/`, a key that is also another key's directory), a broken symbolic link (`WHARF_LINK_BROKEN`), a named pipe, socket or device (`WHARF_SPECIAL_FILE`). The message counts them.",
		Remedy:  "Read the lines above it: each names what was passed over and why. Rename a refused key with the store's own tools (`aws s3 mv`); fix or remove a broken link."})
	// ErrSourceKept: a move copied a source, but the source changed (or went) before it could
	// be removed, so it was kept: the destination holds the version that was copied.
	ErrSourceKept = errcode.New(errcode.Def{Name: "WHARF_MOVE_SOURCE_KEPT", Text: "a moved source changed and was kept",
		Exit: errcode.ExitFailed, Class: errcode.Outcome, Standing: true, Section: section,
		Meaning: "`mv` copied every source, then found that some of them had changed since they were copied (another writer replaced an object, or a local file changed size) or were gone, and did not remove those: a source is removed only while it is the version that was copied. Each kept source is named on standard error; the destination holds what was copied.",
		Remedy:  "Compare each named source with its destination (`wharf stat`), and move it again once its writer is done: the move copies the newer version and removes it."})
	// ErrEmptySource: a sync whose source holds nothing, which is far more often a mistyped
	// path or prefix, or a failed mount, than a wish to empty the destination.
	ErrEmptySource = errcode.New(errcode.Def{Name: "WHARF_SYNC_EMPTY_SOURCE", Text: "the sync's source is empty",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Standing: true, Section: section,
		Meaning: "`sync` found no file or object under its source: nothing was copied and nothing was removed. An empty source is more often a mistyped path or prefix, an unmounted disk or a listing that came back empty than a wish to empty the destination, which is what `--delete` would then do.",
		Remedy:  "Check the source (`wharf ls` it). To sync an empty source on purpose (with `--delete`, removing everything under the destination), add `--allow-empty-source`."})
	// ErrDeleteRefused: a sync with --delete copied what it had to but removed nothing, because
	// a guard held: the source listing passed over something, or there was more to remove
	// than --max-delete allows.
	ErrDeleteRefused = errcode.New(errcode.Def{Name: "WHARF_SYNC_DELETE_REFUSED", Text: "sync removed nothing: a guard held",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Standing: true, Section: section,
		Meaning: "`sync --delete` removes what is only in the destination only when it knows the whole source: it removed nothing because the source listing passed over some entries (each named on standard error: what they hold is unknown), or because more objects would have been removed than `--max-delete` allows (the message gives both numbers). The copies were made.",
		Remedy:  "Fix what was passed over, or run `wharf sync --dry-run --delete` to see what would be removed and raise `--max-delete` if that is meant."})
	// ErrSyncConflict: a sync found a destination changed by another writer after it was
	// listed, and left it as that writer made it.
	ErrSyncConflict = errcode.New(errcode.Def{Name: "WHARF_SYNC_CONFLICT", Text: "a destination changed during the sync",
		Exit: errcode.ExitFailed, Class: errcode.Outcome, Standing: true, Section: section,
		Meaning: "Every write of `sync` is conditional on what it listed at the destination: a new key is a create that never replaces (If-None-Match), a changed one a replace of the version it compared (If-Match), a removal a delete of that version. Another writer changed some of them after the listing, and sync left each as that writer made it, named on standard error. Nothing was removed when a copy was refused.",
		Remedy:  "Run the sync again once the other writer is done: it compares afresh. Two syncs into one destination at once are a race; give each its own prefix."})
)

// Passed reports whether err names one file or key a copy passes over and goes on (a broken
// link, a special file: see Local.Walk), as opposed to a failure that ends it.
func Passed(err error) bool {
	return errors.Is(err, ErrLinkBroken) || errors.Is(err, ErrSpecialFile)
}
