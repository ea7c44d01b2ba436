package spool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/wharfdata/wharf/store"
)

// Kind is an error kind: a sentinel to test for with errors.Is, carrying a stable WHARF_…
// code that store.Code finds.
type Kind = store.Kind

// The kinds of spool failures. Besides these, a missing source file is store.ErrNotExist and a
// permission error (a spool or source directory wharf may not write) is store.ErrForbidden.
var (
	// ErrNotSpool: the directory is not a spool (no spool.json, a part of the layout missing,
	// an unknown format), or Init was pointed at a non-empty directory that is not one.
	ErrNotSpool = store.NewKind("WHARF_SPOOL_INVALID", "not a spool")
	// ErrExists: Init on a directory that already is a spool. Init never resets one.
	ErrExists = store.NewKind("WHARF_SPOOL_EXISTS", "already a spool")
	// ErrLocked: another process owns the spool (holds ship.lock). The message names the lock
	// file and the owner's PID.
	ErrLocked = store.NewKind("WHARF_SPOOL_LOCKED", "spool is owned by another process")
	// ErrCorrupt: the catalog cannot be trusted (a damaged line that is not the last one, a
	// record that contradicts the ones before it), or a file the catalog says is waiting to
	// be uploaded is missing from ready/ or has another size. The message names the path and,
	// for the catalog, the line.
	ErrCorrupt = store.NewKind("WHARF_SPOOL_CORRUPT", "spool corrupt")
	// ErrInput: a dataset name, an extension or a record count is invalid, or the source is not
	// a regular file. Nothing was changed.
	ErrInput = store.NewKind("WHARF_SPOOL_INPUT_INVALID", "invalid spool input")
	// ErrState: the file is not in the state the operation needs (Remove of a file not
	// recorded uploaded, Uploaded of a file that is not eligible, an unknown id), or the
	// Spool or Writer is closed.
	ErrState = store.NewKind("WHARF_SPOOL_STATE_INVALID", "file not in the state the operation needs")
	// ErrIO: reading or writing the spool failed for a reason other than permissions (a full
	// disk, an I/O error).
	ErrIO = store.NewKind("WHARF_SPOOL_IO_ERROR", "spool I/O failed")
)

// Error is a spool failure: the operation, the path at fault (and, for the catalog, the line),
// the kind and the cause. It unwraps to both the kind and the cause.
type Error struct {
	Op   string // "init", "open", "add", "create", "commit", "uploaded", "remove", "refresh", "status"
	Path string // the file or directory at fault
	Line int    // the catalog line, when the fault is in the catalog
	Kind *Kind
	Err  error
}

func (e *Error) Error() string {
	s := e.Op
	if e.Path != "" {
		s += " " + e.Path
	}
	if e.Line > 0 {
		s += fmt.Sprintf(" line %d", e.Line)
	}
	s += ": " + e.Kind.Error()
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

func newErr(op, path string, kind *Kind, cause error) error {
	return &Error{Op: op, Path: path, Kind: kind, Err: cause}
}

func lineErr(op, path string, line int, cause error) error {
	return &Error{Op: op, Path: path, Line: line, Kind: ErrCorrupt, Err: cause}
}

// ioErr wraps an operating-system error on path: a permission error is store.ErrForbidden, a
// missing file store.ErrNotExist, anything else ErrIO. A context error passes through.
func ioErr(op, path string, err error) error {
	if err == nil || store.IsContext(err) {
		return err
	}
	var e *Error
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
	}
	return newErr(op, path, ErrIO, err)
}
