package file

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/wharfdata/wharf/internal/atomicfile"
	"github.com/wharfdata/wharf/store/driver"
)

// Put writes body to a temporary file, then, under the exclusive lock, checks opts' condition
// and moves the file into place. See the package documentation for what it promises.
func (s *Store) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return driver.ObjectInfo{}, err
	}
	o := *opts
	return s.write(ctx, "put", key, body, &o)
}

// Copy streams src into a new file at dst; opts' condition applies to dst. The content type,
// headers and metadata opts gives replace src's; the rest are src's (driver.Carry).
func (s *Store) Copy(ctx context.Context, src, dst string, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return driver.ObjectInfo{}, err
	}
	o := *opts
	f, info, err := s.openObject(ctx, "copy", src)
	if err != nil {
		return driver.ObjectInfo{}, err
	}
	defer f.Close()
	driver.Carry(&o, info)
	o.Size = info.Size
	return s.write(ctx, "copy", dst, f, &o)
}

// write is Put and the second half of Copy.
func (s *Store) write(ctx context.Context, op, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	r, err := s.openRoot(ctx, op, key, true)
	if err != nil {
		return driver.ObjectInfo{}, err
	}
	defer r.Close()
	if err := checkKey(r, op, key); err != nil {
		return driver.ObjectInfo{}, err
	}
	s.sweep.Do(func() { sweepTemp(r, time.Now().Add(-staleTemp)) })
	if o.IfNoneMatch {
		// Refuse before staging the body: a create over an existing key needs no space (a
		// caller that then finds its own bytes there counts that as success). The check
		// that counts is the one below, under the exclusive lock.
		if _, exists, _, err := current(r, op, key); err == nil && exists {
			return driver.ObjectInfo{}, precondition(op, key, "key exists")
		}
	}
	w := &writer{r: r, op: op, key: key}
	defer w.cleanup()
	if err := w.spool(ctx, body, o); err != nil {
		return driver.ObjectInfo{}, err
	}
	if err := w.prepareSidecar(o); err != nil {
		return driver.ObjectInfo{}, err
	}
	release, err := lock(ctx, r, op, key, true)
	if err != nil {
		return driver.ObjectInfo{}, err
	}
	err = w.commit(o)
	release()
	if err == nil {
		err = w.syncDirs()
	}
	if err != nil {
		return driver.ObjectInfo{}, err
	}
	return w.info(), nil
}

// writer carries one write through its steps.
type writer struct {
	r       *os.Root
	op, key string
	body    *atomicfile.File // the body's temporary file
	side    *atomicfile.File // the sidecar's temporary file
	sc      sidecar
}

// cleanup removes whatever temporary file was not placed.
func (w *writer) cleanup() {
	for _, f := range []*atomicfile.File{w.body, w.side} {
		if f != nil {
			f.Abort()
		}
	}
}

func (w *writer) info() driver.ObjectInfo {
	return driver.ObjectInfo{
		Key: w.key, Size: w.sc.Size, ETag: w.sc.ETag,
		LastModified: time.Unix(0, w.sc.MtimeNs).UTC(),
		ContentType:  w.sc.ContentType, Headers: w.sc.Headers, Metadata: maps.Clone(w.sc.Metadata),
	}
}

// staleTemp is the age after which a temporary file is taken for one left by a process that
// died before it could remove it: a write in progress touches its file far more often.
const staleTemp = 24 * time.Hour

// sweepTemp removes the temporary files last modified before cutoff, left by processes that
// were killed mid-write. It is best effort: what it cannot read or remove stays.
func sweepTemp(r *os.Root, cutoff time.Time) {
	d, err := r.Open(filepath.FromSlash(tmpDir))
	if err != nil {
		return
	}
	defer d.Close()
	des, _ := d.ReadDir(-1)
	for _, de := range des {
		if fi, err := de.Info(); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(cutoff) {
			_ = r.Remove(filepath.FromSlash(tmpDir + "/" + de.Name()))
		}
	}
}

// createTemp makes the temporary file of dst (a name below the root) in the hidden tmp
// directory.
func (w *writer) createTemp(dst string) (*atomicfile.File, error) {
	if err := w.r.MkdirAll(filepath.FromSlash(tmpDir), 0o777); err != nil {
		return nil, mapErr(w.op, w.key, err)
	}
	f, err := atomicfile.New(w.r, filepath.FromSlash(tmpDir), dst)
	if err != nil {
		return nil, mapErr(w.op, w.key, err)
	}
	return f, nil
}

// spool copies body into a synced temporary file and fills in the sidecar's identity.
func (w *writer) spool(ctx context.Context, body io.Reader, o *driver.PutOptions) error {
	f, err := w.createTemp(filepath.FromSlash(w.key))
	if err != nil {
		return err
	}
	w.body = f
	h := sha256.New()
	n, err := atomicfile.Copy(ctx, io.MultiWriter(f, h), body)
	if err != nil {
		var we *atomicfile.WriteError
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &we):
			return mapErr(w.op, w.key, we.Err)
		}
		return driver.BodyError(ctx, w.op, w.key, err)
	}
	if o.Size > 0 && n != o.Size {
		return driver.BodyError(ctx, w.op, w.key, fmt.Errorf("read %d bytes, expected %d: %w", n, o.Size, io.ErrUnexpectedEOF))
	}
	if err := f.Sync(); err != nil {
		return mapErr(w.op, w.key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return mapErr(w.op, w.key, err)
	}
	w.sc = sidecar{Key: w.key, ETag: newETag(h), Size: n, MtimeNs: fi.ModTime().UnixNano(), Ino: inode(fi)}
	return nil
}

// newETag mixes a random nonce into the content hash: two writes of the same bytes differ.
func newETag(h hash.Hash) string {
	sum := sha256.Sum256([]byte(hex.EncodeToString(h.Sum(nil)) + rand.Text()))
	return hex.EncodeToString(sum[:16])
}

// prepareSidecar writes the sidecar to a synced temporary file, ready to be renamed.
func (w *writer) prepareSidecar(o *driver.PutOptions) error {
	w.sc.ContentType = o.ContentType
	w.sc.Headers = o.Headers
	w.sc.Metadata = maps.Clone(o.Metadata)
	b, err := json.Marshal(&w.sc)
	if err != nil {
		return mapErr(w.op, w.key, err)
	}
	f, err := w.createTemp(sidecarPath(w.key))
	if err != nil {
		return err
	}
	w.side = f
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	return mapErr(w.op, w.key, err)
}

// commit checks the condition and moves the files into place; the exclusive lock is held.
func (w *writer) commit(o *driver.PutOptions) error {
	if err := w.check(o.IfNoneMatch, o.IfMatch); err != nil {
		return err
	}
	dir := parentOf(w.key)
	if err := w.mkdirs(dir); err != nil {
		return err
	}
	if err := w.place(o.IfNoneMatch); err != nil {
		return err
	}
	return w.placeSidecar()
}

// syncDirs makes the renames durable. It runs after the lock is released, so writers do not
// wait on each other's fsyncs; the caller hears of success only once both are done. A
// directory pruned meanwhile by a Delete has nothing left to sync.
func (w *writer) syncDirs() error {
	for _, dir := range []string{filepath.FromSlash(parentOf(w.key)), filepath.Dir(sidecarPath(w.key))} {
		if err := atomicfile.SyncDir(w.r, dir); err != nil && !isNotExist(err) {
			return mapErr(w.op, w.key, err)
		}
	}
	return nil
}

// check applies a condition to the current object; the exclusive lock is held.
func (w *writer) check(ifNoneMatch bool, ifMatch string) error {
	cur, exists, isDir, err := current(w.r, w.op, w.key)
	switch {
	case err != nil:
		return err
	case isDir:
		return conflict(w.op, w.key, "%s is a directory of other keys", w.key)
	case ifNoneMatch && exists:
		return precondition(w.op, w.key, "key exists")
	case ifMatch != "" && !exists:
		return precondition(w.op, w.key, "key does not exist")
	case ifMatch != "" && cur.ETag != ifMatch:
		return precondition(w.op, w.key, "current ETag is %q, not %q", cur.ETag, ifMatch)
	}
	return nil
}

// mkdirs makes the key's parent directories, fsyncing each parent of a new one.
func (w *writer) mkdirs(dir string) error {
	if dir == "." {
		return nil
	}
	native := filepath.FromSlash(dir)
	if fi, err := w.r.Lstat(native); err == nil {
		if !fi.IsDir() {
			return conflict(w.op, w.key, "%s is an object", dir)
		}
		return nil
	}
	if err := w.r.MkdirAll(native, 0o777); err != nil {
		if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EEXIST) {
			return conflict(w.op, w.key, "a part of %s is an object", dir)
		}
		return mapErr(w.op, w.key, err)
	}
	for d := dir; d != "."; {
		d = parentOf(d)
		if err := atomicfile.SyncDir(w.r, filepath.FromSlash(d)); err != nil {
			return mapErr(w.op, w.key, err)
		}
	}
	return nil
}

// place moves the body into place: link(2) for create-if-absent, which fails rather than
// replace a file that appeared since the check; rename(2) otherwise.
func (w *writer) place(create bool) error {
	err := w.body.Place(create)
	switch {
	case create && errors.Is(err, os.ErrExist):
		return precondition(w.op, w.key, "key exists")
	case errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST):
		return conflict(w.op, w.key, "%s is a directory of other keys", w.key)
	}
	return mapErr(w.op, w.key, err)
}

func (w *writer) placeSidecar() error {
	if err := w.r.MkdirAll(filepath.Dir(sidecarPath(w.key)), 0o777); err != nil {
		return mapErr(w.op, w.key, err)
	}
	return mapErr(w.op, w.key, w.side.Place(false))
}
