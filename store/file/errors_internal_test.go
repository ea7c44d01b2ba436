//go:build unix

package file

import (
	"context"
	"errors"
	"io/fs"
	"syscall"
	"testing"

	"github.com/wharfdata/wharf/store/driver"
)

func TestMapErr(t *testing.T) {
	already := &driver.Error{Op: "get", Key: "k", Kind: driver.ErrPreconditionFailed}
	cases := []struct {
		err  error
		want error
	}{
		{&fs.PathError{Op: "open", Path: "k", Err: syscall.ENOENT}, driver.ErrNotExist},
		{&fs.PathError{Op: "open", Path: "k", Err: syscall.ENOTDIR}, driver.ErrNotExist},
		{&fs.PathError{Op: "open", Path: "k", Err: syscall.EACCES}, driver.ErrForbidden},
		{&fs.PathError{Op: "open", Path: "k", Err: syscall.EPERM}, driver.ErrForbidden},
		{&fs.PathError{Op: "open", Path: "k", Err: syscall.EROFS}, driver.ErrForbidden},
		{&fs.PathError{Op: "open", Path: "k", Err: syscall.ENAMETOOLONG}, driver.ErrKeyInvalid},
		{&fs.PathError{Op: "write", Path: "k", Err: syscall.ENOSPC}, driver.ErrUnavailable},
		{already, driver.ErrPreconditionFailed},
	}
	for _, c := range cases {
		err := mapErr("put", "k", c.err)
		if !errors.Is(err, c.want) || !errors.Is(err, c.err) {
			t.Errorf("mapErr(%v) = %v, want %v wrapping the cause", c.err, err, c.want)
		}
		var se *driver.Error
		if !errors.As(err, &se) || se.Op == "" || se.Key != "k" {
			t.Errorf("mapErr(%v) = %#v: no Op or Key", c.err, err)
		}
	}
	for _, ctxErr := range []error{context.Canceled, context.DeadlineExceeded} {
		if err := mapErr("put", "k", ctxErr); err != ctxErr {
			t.Errorf("mapErr(%v) = %v, want it unwrapped", ctxErr, err)
		}
	}
	if mapErr("put", "k", nil) != nil {
		t.Error("mapErr(nil) != nil")
	}
}
