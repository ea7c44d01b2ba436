package file

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/wharfdata/wharf/store/driver"
)

// Get opens the file at key. The ETag check of a pinned read and the opening of the file happen
// under the shared lock, so the body read is the version the ETag names, even if the key is
// replaced while the caller reads. A range starting at or past the end returns an empty body.
func (s *Store) Get(ctx context.Context, key string, opts *driver.GetOptions) (*driver.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := *opts
	f, info, err := s.openObject(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	if o.IfMatch != "" && o.IfMatch != info.ETag {
		f.Close()
		return nil, precondition("get", key, "current ETag is %q, not %q", info.ETag, o.IfMatch)
	}
	if o.Offset > 0 {
		if _, err := f.Seek(o.Offset, io.SeekStart); err != nil {
			f.Close()
			return nil, mapErr("get", key, err)
		}
	}
	var body io.Reader = f
	if o.Length > 0 {
		body = io.LimitReader(f, o.Length)
	}
	return &driver.Object{Info: info, ReadCloser: &fileBody{Reader: body, f: f}}, nil
}

type fileBody struct {
	io.Reader
	f *os.File
}

func (b *fileBody) Close() error { return b.f.Close() }

// Head returns the object's metadata.
func (s *Store) Head(ctx context.Context, key string) (driver.ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return driver.ObjectInfo{}, err
	}
	f, info, err := s.openObject(ctx, "head", key)
	if err != nil {
		return driver.ObjectInfo{}, err
	}
	f.Close()
	return info, nil
}

// openObject opens the regular file at key and describes the version it opened.
func (s *Store) openObject(ctx context.Context, op, key string) (*os.File, driver.ObjectInfo, error) {
	r, err := s.openRoot(ctx, op, key, false)
	if err == errNoRoot {
		if err := validKey(op, key); err != nil {
			return nil, driver.ObjectInfo{}, err
		}
		return nil, driver.ObjectInfo{}, &driver.Error{Op: op, Key: key, Kind: driver.ErrNotExist,
			Err: fmt.Errorf("directory %s is not made yet", s.dir)}
	}
	if err != nil {
		return nil, driver.ObjectInfo{}, err
	}
	defer r.Close()
	if err := checkKey(r, op, key); err != nil {
		return nil, driver.ObjectInfo{}, err
	}
	release, err := lock(ctx, r, op, key, false)
	if err != nil {
		return nil, driver.ObjectInfo{}, err
	}
	defer release()
	f, err := r.Open(filepath.FromSlash(key))
	if err != nil {
		return nil, driver.ObjectInfo{}, mapErr(op, key, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &driver.Error{Op: op, Key: key, Kind: driver.ErrNotExist}
	}
	if err != nil {
		f.Close()
		return nil, driver.ObjectInfo{}, mapErr(op, key, err)
	}
	return f, infoOf(r, key, fi, true), nil
}
