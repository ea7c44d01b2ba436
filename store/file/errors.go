package file

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/wharfdata/wharf/store"
)

// mapErr turns an OS error into a *store.Error of the right kind. Context errors and errors
// that already carry a kind pass through.
func mapErr(op, key string, err error) error {
	if err == nil {
		return nil
	}
	var se *store.Error
	if store.IsContext(err) || errors.As(err, &se) {
		return err
	}
	kind := store.ErrUnavailable
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR):
		kind = store.ErrNotExist
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		kind = store.ErrForbidden
	case errors.Is(err, syscall.ENAMETOOLONG):
		kind = store.ErrKeyInvalid
	}
	return &store.Error{Op: op, Key: key, Kind: kind, Err: err}
}

func invalidKey(op, key, format string, a ...any) error {
	return &store.Error{Op: op, Key: key, Kind: store.ErrKeyInvalid, Err: fmt.Errorf(format, a...)}
}

func precondition(op, key, format string, a ...any) error {
	return &store.Error{Op: op, Key: key, Kind: store.ErrPreconditionFailed, Err: fmt.Errorf(format, a...)}
}

func conflict(op, key, format string, a ...any) error {
	return &store.Error{Op: op, Key: key, Kind: store.ErrUnsupported,
		Err: fmt.Errorf(format+": a file store cannot hold both a key and keys below it", a...)}
}
