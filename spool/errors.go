package spool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

const section = "Spool"

// The kinds of spool failures, each an *errcode.Code. Besides these, a missing source file is
// store.ErrNotExist and a permission error (a spool or source directory wharf may not write)
// is store.ErrForbidden.
var (
	// ErrNotSpool: the directory is not a spool (no spool.json, a part of the layout missing,
	// an unknown format), or Init was pointed at a non-empty directory that is not one.
	ErrNotSpool = errcode.New(errcode.Def{Name: "WHARF_SPOOL_INVALID", Text: "not a spool",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Section: section,
		Meaning: "The directory is not a spool: no `spool.json`, a part of the layout (`ready/`, `tmp/`, `catalog.log`) missing, or a format this wharf does not read. Or `wharf spool init` was given a non-empty directory that is not a spool. The message names the path.",
		Remedy:  "Make the spool with `wharf spool init DIR`, or point at the right directory."})
	// ErrExists: Init on a directory that already is a spool. Init never resets one.
	ErrExists = errcode.New(errcode.Def{Name: "WHARF_SPOOL_EXISTS", Text: "already a spool",
		Exit: errcode.ExitFailed, Class: errcode.Outcome, Section: section,
		Meaning: "`wharf spool init` on a directory that already is a spool. A spool is never reset: its epoch is in every key it shipped.",
		Remedy:  "Nothing to do, the spool is there. To start over, remove the directory yourself."})
	// ErrLocked: another process owns the spool (holds ship.lock). The message names the lock
	// file and the owner's PID.
	ErrLocked = errcode.New(errcode.Def{Name: "WHARF_SPOOL_LOCKED", Text: "spool is owned by another process",
		Exit: errcode.ExitFailed, Class: errcode.Operator, Section: section,
		Meaning: "Another process owns the spool: it holds `ship.lock`. The message names the lock file and the owner's PID.",
		Remedy:  "Run one `wharf ship` per spool; stop the other one (its PID is in the message and in `wharf spool status`)."})
	// ErrCorrupt: the catalog cannot be trusted (a damaged line that is not the last one, a
	// record that contradicts the ones before it), or a file the catalog says is waiting to
	// be uploaded is missing from ready/ or has another size. The message names the path and,
	// for the catalog, the line.
	ErrCorrupt = errcode.New(errcode.Def{Name: "WHARF_SPOOL_CORRUPT", Text: "spool corrupt",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Standing: true, Section: section,
		Meaning: "The catalog cannot be trusted: a damaged line that is not the last one, or a record that contradicts the ones before it (named by path and line); or a file the catalog says is waiting for its upload is missing from `ready/` or has another size (named by path). A torn last line is only a warning.",
		Remedy:  "Restore the file or the catalog from a backup. Do not edit the catalog to hide the error: the named file was never uploaded."})
	// ErrInput: a dataset name, an extension or a record count is invalid, or the source is not
	// a regular file. Nothing was changed.
	ErrInput = errcode.New(errcode.Def{Name: "WHARF_SPOOL_INPUT_INVALID", Text: "invalid spool input",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Section: section,
		Meaning: "A file cannot be spooled as given: it is not a regular file (a directory, a device, or a symbolic link when moving), its extension is not 1–16 of a-z and 0-9 (`x.tar-v1`), or it changed while it was added. Nothing was changed.",
		Remedy:  "Add finished regular files; give the extension with `--ext`, or copy a symbolic link's target with `--copy`."})
	// ErrState: the file is not in the state the operation needs (Remove of a file not
	// recorded uploaded, Uploaded of a file that is not eligible, an unknown id), or the
	// Spool or Writer is closed.
	ErrState = errcode.New(errcode.Def{Name: "WHARF_SPOOL_STATE_INVALID", Text: "file not in the state the operation needs",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Section: section,
		Meaning: "A file is not in the state the operation needs: local retention asked to remove a file not recorded uploaded (refused: it is never deleted), an upload recorded twice or for an unknown file, or the spool was closed.",
		Remedy:  "A bug in the program using the spool; report it with the message."})
	// ErrIO: reading or writing the spool failed for a reason other than permissions or a
	// full file system (an I/O error, the catalog lock busy for a minute).
	ErrIO = errcode.New(errcode.Def{Name: "WHARF_SPOOL_IO_ERROR", Text: "spool I/O failed",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: section,
		Meaning: "Reading or writing the spool failed for a reason other than permissions or a full file system: an I/O error, the catalog lock busy for a minute. The message names the path. Nothing was recorded half-done.",
		Remedy:  "Fix the disk, then run the command again."})
	// ErrFull: the spool's file system has no space (or no quota) left for what had to be
	// written: a file being added, or a catalog record. The message names the path.
	ErrFull = errcode.New(errcode.Def{Name: "WHARF_SPOOL_FULL", Text: "the spool's file system is full",
		Exit: errcode.ExitFailed, Class: errcode.Operator, Section: section,
		Meaning: "The spool's file system has no space (or no quota) left for what had to be written: a file being added to `tmp/`, or a catalog record (the catalog keeps a reserve of 128 KiB past its end for records, and this was used up too). The message names the path. Nothing was recorded half-done. `wharf ship` starts, ships and removes files on a full disk, and keeps retrying a record it cannot write; `wharf spool add` fails.",
		Remedy:  "Free space on the spool's file system (`df` on the spool directory). A running `wharf ship` with `delete_after_upload` frees the space of every file it ships once their records fit; with `keep` or a long `keep_for` it cannot."})
)

func newErr(op, path string, kind *errcode.Code, cause error) error {
	return errcode.E(op, path, kind, cause)
}

func lineErr(op, path string, line int, cause error) error {
	return errcode.E(op, fmt.Sprintf("%s line %d", path, line), ErrCorrupt, cause)
}

// ioErr wraps an operating-system error on path: a permission error is store.ErrForbidden, a
// missing file store.ErrNotExist, no space left ErrFull, anything else ErrIO. A context error passes through.
func ioErr(op, path string, err error) error {
	if err == nil || store.IsContext(err) {
		return err
	}
	var e *errcode.Error
	if errors.As(err, &e) {
		return err
	}
	// The path is in the Error; strip the *PathError's own copy of it.
	switch e := err.(type) {
	case *fs.PathError:
		err = e.Err
	case *os.LinkError:
		err = e.Err
	}
	switch {
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return newErr(op, path, store.ErrForbidden, err)
	case errors.Is(err, fs.ErrNotExist):
		return newErr(op, path, store.ErrNotExist, err)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return newErr(op, path, ErrFull, err)
	}
	return newErr(op, path, ErrIO, err)
}
