// Package atomicfile is the one way wharf writes a local file that must survive a crash: the
// bytes go to a temporary file beside the destination (or in a directory the caller names, on
// the same file system), which is fsynced, then renamed into place — or, for create-if-absent,
// hard-linked, which fails rather than replace a name that exists, even one another process
// made meanwhile — and the directory is fsynced. A failed or cancelled write leaves nothing at
// the destination and removes its temporary file; an error is always returned, never dropped.
//
// The files can be reached through the OS (paths) or through an *os.Root (names relative to
// it, which never leave it): both satisfy FS.
package atomicfile

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// FS is where the files are: OS, or an *os.Root.
type FS interface {
	Open(name string) (*os.File, error)
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
	Rename(oldname, newname string) error
	Link(oldname, newname string) error
	Remove(name string) error
}

// OS is the file system reached by path.
var OS FS = osFS{}

type osFS struct{}

func (osFS) Open(name string) (*os.File, error) { return os.Open(name) }
func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}
func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (osFS) Link(oldname, newname string) error   { return os.Link(oldname, newname) }
func (osFS) Remove(name string) error             { return os.Remove(name) }

// TempMarker is in the name of every temporary file made beside its destination: listings of
// plain directories skip such names.
const TempMarker = ".wharf-tmp-"

// File is a file being written under a temporary name, to be placed at its destination once
// complete.
type File struct {
	*os.File
	fsys   FS
	tmp    string // the temporary name
	path   string // the destination
	closed bool
	placed bool
}

// Create makes the temporary file of path beside it, in path's directory (which must exist),
// readable as os.Create would make it.
func Create(path string) (*File, error) { return New(OS, "", path) }

// New makes the temporary file of path on fsys: in dir, or beside path when dir is "".
func New(fsys FS, dir, path string) (*File, error) {
	if dir == "" {
		dir = filepath.Dir(path)
	}
	for {
		tmp := filepath.Join(dir, "."+filepath.Base(path)+TempMarker+rand.Text()[:13])
		f, err := fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &File{File: f, fsys: fsys, tmp: tmp, path: path}, nil
	}
}

// TempName is the temporary file's name.
func (f *File) TempName() string { return f.tmp }

// Close closes the temporary file; it may be called more than once.
func (f *File) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	return f.File.Close()
}

// Place closes the file and moves it to its destination: a rename, which replaces what is
// there, or with exclusive a hard link, which fails with an error wrapping fs.ErrExist when
// the destination exists, then the removal of the temporary name. It does not fsync the
// file (call Sync first) or the directory (SyncDir after).
func (f *File) Place(exclusive bool) error {
	if err := f.Close(); err != nil {
		return err
	}
	if !exclusive {
		if err := f.fsys.Rename(f.tmp, f.path); err != nil {
			return err
		}
		f.placed = true
		return nil
	}
	if err := f.fsys.Link(f.tmp, f.path); err != nil {
		return err
	}
	f.placed = true
	_ = f.fsys.Remove(f.tmp) // the file is in place under its final name: only the extra name goes
	return nil
}

// Commit fsyncs the file, places it (see Place) and fsyncs its destination's directory.
func (f *File) Commit(exclusive bool) error {
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Place(exclusive); err != nil {
		return err
	}
	return SyncDir(f.fsys, filepath.Dir(f.path))
}

// Abort closes and removes the temporary file, unless it was placed: nothing appears at the
// destination. It is safe to defer.
func (f *File) Abort() {
	_ = f.Close()
	if !f.placed {
		_ = f.fsys.Remove(f.tmp)
	}
}

// SyncDir fsyncs a directory, so that the entries made, renamed or removed in it survive a
// crash.
func SyncDir(fsys FS, dir string) error {
	d, err := fsys.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Write writes what r gives to path, durably and whole (see the package documentation): the
// directory is made when missing; with exclusive an existing path fails with an error
// wrapping fs.ErrExist and is never replaced. It returns the bytes written; a failure of r is
// returned as it is, one of the file as a *WriteError.
func Write(ctx context.Context, path string, r io.Reader, exclusive bool) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, &WriteError{Path: filepath.Dir(path), Err: err}
	}
	if exclusive {
		if _, err := os.Lstat(path); err == nil {
			return 0, &WriteError{Path: path, Err: fs.ErrExist}
		}
	}
	f, err := Create(path)
	if err != nil {
		return 0, &WriteError{Path: path, Err: err}
	}
	defer f.Abort()
	n, err := Copy(ctx, f, r)
	if err != nil {
		var we *WriteError
		if errors.As(err, &we) {
			we.Path = f.TempName()
		}
		return n, err
	}
	if err := f.Commit(exclusive); err != nil {
		return n, &WriteError{Path: path, Err: err}
	}
	return n, nil
}

// WriteError is a failure of the file being written (not of what was copied into it),
// naming the file.
type WriteError struct {
	Path string
	Err  error
}

func (e *WriteError) Error() string {
	if e.Path == "" {
		return "writing: " + e.Err.Error()
	}
	return fmt.Sprintf("writing %s: %v", e.Path, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// bufSize is Copy's chunk: a 4 KiB file is one read, and a large one costs few system
// calls. Larger is slower: downloading 16 files of 64 MiB from MinIO with 128 or 256 KiB
// chunks took 3.2-4.3 s of system time against 0.6-0.8 s with 64 KiB; the kernel's cost per
// byte of a write into the page cache rises with the size of the write (bench/README.md).
const bufSize = 64 << 10

var bufs = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

// Copy copies r to w in chunks from a shared pool, each filled before it is written,
// checking ctx between chunks and returning the context's error once it ends (r should
// itself honour ctx when it can block). A failure of w is a *WriteError, so a caller tells
// the destination's failures from the source's; a failure of r is returned as it is.
func Copy(ctx context.Context, w io.Writer, r io.Reader) (int64, error) {
	if r == nil {
		return 0, nil
	}
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	buf := *bp
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		nr, rerr := fill(r, buf)
		if nr > 0 {
			nw, werr := w.Write(buf[:nr])
			n += int64(nw)
			if werr != nil {
				return n, &WriteError{Err: werr}
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

// fill reads from r until buf is full, r fails (io.EOF included) or r gives nothing without
// an error: fewer, larger writes, and ctx is checked again after an empty read.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil || m == 0 {
			return n, err
		}
	}
	return n, nil
}
