//go:build unix

package file

import (
	"context"
	"errors"
	"io/fs"
	"syscall"
	"testing"

	"github.com/wharfdata/wharf/store"
)

func TestMapErr(t *testing.T) {
	already := &store.Error{Op: "get", Key: "k", Kind: store.ErrPreconditionFailed}
	cases := []struct {
		err  error
		want error
	}{
		{&fs.PathError{Op: "open", Path: "k", Err: syscall.ENOENT}, store.ErrNotExist},
		{&fs.PathError{Op: "open", Path: "k", Err: syscall.ENOTDIR}, store.ErrNotExist},
		{&fs.PathError{Op: "open", Path: "k", Err: syscall.EACCES}, store.ErrForbidden},
		{&fs.PathError{Op: "open", Path: "k", Err: syscall.EPERM}, store.ErrForbidden},
		{&fs.PathError{Op: "open", Path: "k", Err: syscall.EROFS}, store.ErrForbidden},
		{&fs.PathError{Op: "open", Path: "k", Err: syscall.ENAMETOOLONG}, store.ErrKeyInvalid},
		{&fs.PathError{Op: "write", Path: "k", Err: syscall.ENOSPC}, store.ErrUnavailable},
		{already, store.ErrPreconditionFailed},
	}
	for _, c := range cases {
		err := mapErr("put", "k", c.err)
		if !errors.Is(err, c.want) || !errors.Is(err, c.err) {
			t.Errorf("mapErr(%v) = %v, want %v wrapping the cause", c.err, err, c.want)
		}
		var se *store.Error
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
