package main

import (
	"context"
	"errors"
	"io"
	"io/fs"

	"github.com/wharfdata/wharf/internal/atomicfile"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/transfer"
)

// copyCtx copies r to w, checking ctx between chunks (atomicfile.Copy). r should itself
// honour ctx (a store object does; wrap standard input with cancelable).
func copyCtx(ctx context.Context, w io.Writer, r io.Reader) (int64, error) {
	return atomicfile.Copy(ctx, w, r)
}

// cancelable returns a reader of r whose Read returns ctx's error as soon as ctx ends, even
// while r itself is blocked (standard input waiting for a producer).
func cancelable(ctx context.Context, r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, r)
		pw.CloseWithError(err)
	}()
	context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	return pr
}

// writeFileAtomic writes r to path durably and whole (atomicfile.Write): a failed or
// cancelled write leaves nothing behind and never a partial file at path. With ifAbsent, an
// existing path is ErrPreconditionFailed and is never replaced, even if another process
// makes it meanwhile.
func writeFileAtomic(ctx context.Context, path string, r io.Reader, ifAbsent bool) (int64, error) {
	n, err := atomicfile.Write(ctx, path, r, ifAbsent)
	var we *atomicfile.WriteError
	switch {
	case err == nil, store.IsContext(err):
		return n, err
	case ifAbsent && errors.Is(err, fs.ErrExist):
		return n, &store.Error{Op: "put", Key: path, Kind: store.ErrPreconditionFailed,
			Err: errors.New("the file exists and --if-absent was given")}
	case errors.As(err, &we):
		return n, transfer.LocalError("write", path, we.Err)
	}
	return n, err // the source failed: it says which
}
