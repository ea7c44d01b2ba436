package file

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/wharfdata/wharf/store/driver"
)

// mapErr turns an OS error into a *driver.Error of the right kind. Context errors and errors
// that already carry a kind pass through.
func mapErr(op, key string, err error) error {
	if err == nil {
		return nil
	}
	var se *driver.Error
	if driver.IsContext(err) || errors.As(err, &se) {
		return err
	}
	kind := driver.ErrUnavailable
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR):
		kind = driver.ErrNotExist
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		kind = driver.ErrForbidden
	case errors.Is(err, syscall.ENAMETOOLONG):
		kind = driver.ErrKeyInvalid
	}
	return &driver.Error{Op: op, Key: key, Kind: kind, Err: err}
}

func invalidKey(op, key, format string, a ...any) error {
	return &driver.Error{Op: op, Key: key, Kind: driver.ErrKeyInvalid, Err: fmt.Errorf(format, a...)}
}

func precondition(op, key, format string, a ...any) error {
	return &driver.Error{Op: op, Key: key, Kind: driver.ErrPreconditionFailed, Err: fmt.Errorf(format, a...)}
}

func conflict(op, key, format string, a ...any) error {
	return &driver.Error{Op: op, Key: key, Kind: driver.ErrUnsupported,
		Err: fmt.Errorf(format+": a file store cannot hold both a key and keys below it", a...)}
}
