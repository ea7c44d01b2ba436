package transfer

import (
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
		Exit: errcode.ExitFailed, Standing: true, Section: section,
		Meaning: "A local file got shorter or longer while `cp` was reading it (another program was writing it, or truncated it). The copy is not retried: nothing is left at the destination (an upload in parts is aborted before it is committed), and the message names the file with its size when the copy began and what it found.",
		Remedy:  "Copy the file once it is complete (the program writing it has closed it), or copy a snapshot of it."})
)
