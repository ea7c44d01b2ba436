package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/transfer"
)

// copyBuf is the chunk size of copyCtx.
const copyBuf = 256 << 10

// copyCtx copies r to w in chunks, checking ctx between chunks, and returns the context's
// error once it ends. r should itself honour ctx (a store object does; wrap standard input
// with cancelable).
func copyCtx(ctx context.Context, w io.Writer, r io.Reader) (int64, error) {
	buf := make([]byte, copyBuf)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		nr, rerr := r.Read(buf)
		if nr > 0 {
			nw, werr := w.Write(buf[:nr])
			n += int64(nw)
			if werr != nil {
				return n, werr
			}
		}
		switch {
		case rerr == io.EOF:
			return n, nil
		case rerr != nil:
			return n, rerr
		}
	}
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

// writeFileAtomic writes r to path through a temporary file in the same directory, fsynced
// and renamed into place only when complete: a failed or cancelled write leaves nothing
// behind and never a partial file at path. With ifAbsent, an existing path is
// ErrPreconditionFailed and is never replaced (the file is linked into place, which fails
// when the name exists, even if another process made it meanwhile).
func writeFileAtomic(ctx context.Context, path string, r io.Reader, ifAbsent bool) (n int64, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, transfer.LocalError("mkdir", dir, err)
	}
	if ifAbsent {
		if _, err := os.Lstat(path); err == nil {
			return 0, existsErr(path)
		}
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".wharf-tmp-*")
	if err != nil {
		return 0, transfer.LocalError("create", dir, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if n, err = copyCtx(ctx, f, r); err != nil {
		return n, err
	}
	if err = finish(f); err != nil {
		return n, transfer.LocalError("write", tmp, err)
	}
	if err = place(tmp, path, ifAbsent); err != nil {
		return n, err
	}
	syncDir(dir)
	return n, nil
}

// finish makes the temporary file readable like one os.Create would make, fsyncs and closes it.
func finish(f *os.File) error {
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// place moves tmp to path: a rename, or with ifAbsent a hard link that fails on an existing
// name, then removing tmp.
func place(tmp, path string, ifAbsent bool) error {
	if !ifAbsent {
		if err := os.Rename(tmp, path); err != nil {
			return transfer.LocalError("rename", path, err)
		}
		return nil
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return existsErr(path)
		}
		return transfer.LocalError("link", path, err)
	}
	return os.Remove(tmp)
}

func existsErr(path string) error {
	return &store.Error{Op: "put", Key: path, Kind: store.ErrPreconditionFailed,
		Err: errors.New("the file exists and --if-absent was given")}
}

// syncDir fsyncs a directory so a rename into it survives a crash; best effort, as some
// file systems refuse to fsync a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
