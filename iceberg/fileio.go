package iceberg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"
	"time"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/wharfdata/wharf/store"
)

// wholeFile is the size up to which Open reads an object whole: metadata files, manifest
// lists and manifests are far smaller, and are read in one request. A larger object (a
// Parquet data file) is read by ranged gets pinned to the ETag it had when opened.
const wholeFile = 4 << 20

// FileIO is iceberg-go's file IO (io.IO, io.ReadFileIO, io.WriteFileIO, io.StatIO) over a
// wharf store opened at a table's location, so endpoints, credentials, guards and the retry
// policy stay the store's. iceberg-go names files by absolute location
// (s3://bucket/prefix/metadata/…, file:///dir/…); FileIO serves those below its location as
// the store's keys and refuses any other with ErrOutsideTable.
//
// Reads: an object up to 4 MiB is read whole when opened; a larger one serves ReadAt by
// ranged gets and Read by one stream, each pinned to the ETag the object had when opened, so
// a file replaced meanwhile fails with store.ErrPreconditionFailed rather than mix versions.
// A Table's FileIO keeps the manifests and manifest lists it reads or writes (up to 32 MiB):
// they never change once written, and a commit reads each more than once.
// Writes (Create, WriteFile) are unconditional puts; Create buffers the file in memory and
// puts it on Close, which suits the manifests and manifest lists iceberg-go writes here.
//
// Every failure is an *fs.PathError whose cause is the store's *store.Error; a missing
// object also satisfies errors.Is(err, fs.ErrNotExist). iceberg-go's IO methods take no
// context: a FileIO uses the one WithContext gave it.
type FileIO struct {
	st   *store.Store
	root string // the table's location, without a trailing '/'
	ctx  context.Context
	// written, when set, records the key of every file put through this FileIO (and its
	// copies): a commit attempt's manifests, which a lost race leaves unreferenced.
	written *writeLog
	// kept, when set, keeps the manifests and manifest lists read or written through this
	// FileIO (and its copies): they never change once written, and a commit reads each
	// several times (the current files, then again to carry them over).
	kept *avroCache
}

// avroCache holds immutable Avro files of a table's metadata/ by key, up to maxCached bytes.
type avroCache struct {
	mu    sync.Mutex
	files map[string][]byte
	bytes int
}

const maxCached = 32 << 20

// cacheable reports whether the file at key never changes once written: a manifest or a
// manifest list, named uniquely by iceberg-go.
func cacheable(key string) bool {
	return strings.HasPrefix(key, metadataDir) && strings.HasSuffix(key, ".avro")
}

func (c *avroCache) get(key string) ([]byte, bool) {
	if c == nil || !cacheable(key) {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.files[key]
	return b, ok
}

func (c *avroCache) put(key string, b []byte) {
	if c == nil || !cacheable(key) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.files[key]; ok || c.bytes+len(b) > maxCached {
		return
	}
	if c.files == nil {
		c.files = map[string][]byte{}
	}
	c.files[key] = bytes.Clone(b)
	c.bytes += len(b)
}

func (c *avroCache) drop(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes -= len(c.files[key])
	delete(c.files, key)
}

// writeLog is the keys a commit attempt wrote.
type writeLog struct {
	mu   sync.Mutex
	keys []string
}

func (l *writeLog) add(key string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.keys = append(l.keys, key)
	l.mu.Unlock()
}

// take returns the keys recorded so far and forgets them.
func (l *writeLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.keys
	l.keys = nil
	return k
}

var (
	_ icebergio.IO          = (*FileIO)(nil)
	_ icebergio.ReadFileIO  = (*FileIO)(nil)
	_ icebergio.WriteFileIO = (*FileIO)(nil)
	_ icebergio.StatIO      = (*FileIO)(nil)
	_ icebergio.File        = (*file)(nil)
	_ icebergio.FileWriter  = (*writer)(nil)
)

// NewFileIO returns the file IO of the table at location, whose files st (opened at
// location) holds.
func NewFileIO(st *store.Store, location string) *FileIO {
	return &FileIO{st: st, root: strings.TrimRight(location, "/"), ctx: context.Background()}
}

// WithContext returns a FileIO whose requests are made with ctx.
func (f *FileIO) WithContext(ctx context.Context) *FileIO {
	c := *f
	c.ctx = ctx
	return &c
}

// Location is the table location the FileIO serves.
func (f *FileIO) Location() string { return f.root }

// Key returns the store key of the file at location name: the part below the table's
// location. A location outside it is ErrOutsideTable.
func (f *FileIO) Key(name string) (string, error) {
	if k, ok := strings.CutPrefix(name, f.root+"/"); ok && k != "" {
		return k, nil
	}
	return "", fmt.Errorf("%w: %q is not below the table's location %q", ErrOutsideTable, name, f.root)
}

// location returns the location of the store key k.
func (f *FileIO) location(k string) string { return f.root + "/" + k }

// pathError is the *fs.PathError of a failed op on name.
func pathError(op, name string, err error) error {
	if store.IsContext(err) {
		return err
	}
	if errors.Is(err, store.ErrNotExist) {
		err = notExist{err}
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// notExist is a store's ErrNotExist that is also fs.ErrNotExist, as iceberg-go tests.
type notExist struct{ err error }

func (e notExist) Error() string        { return e.err.Error() }
func (e notExist) Unwrap() error        { return e.err }
func (e notExist) Is(target error) bool { return target == fs.ErrNotExist }

// Open opens the file at name for reading.
func (f *FileIO) Open(name string) (icebergio.File, error) {
	key, err := f.Key(name)
	if err != nil {
		return nil, pathError("open", name, err)
	}
	if b, ok := f.kept.get(key); ok {
		return &file{io: f, name: name, key: key, info: store.ObjectInfo{Key: key, Size: int64(len(b))}, data: b}, nil
	}
	obj, err := f.st.Get(f.ctx, key, nil)
	if err != nil {
		return nil, pathError("open", name, err)
	}
	r := &file{io: f, name: name, key: key, info: obj.Info}
	if obj.Info.Size > wholeFile {
		r.body = obj // the stream from offset 0, for sequential reads
		return r, nil
	}
	defer obj.Close()
	if r.data, err = io.ReadAll(obj); err != nil {
		return nil, pathError("open", name, err)
	}
	r.info.Size = int64(len(r.data))
	f.kept.put(key, r.data)
	return r, nil
}

// ReadFile reads the whole file at name.
func (f *FileIO) ReadFile(name string) ([]byte, error) {
	key, err := f.Key(name)
	if err != nil {
		return nil, pathError("read", name, err)
	}
	if b, ok := f.kept.get(key); ok {
		return bytes.Clone(b), nil
	}
	obj, err := f.st.Get(f.ctx, key, nil)
	if err != nil {
		return nil, pathError("read", name, err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		return nil, pathError("read", name, err)
	}
	f.kept.put(key, b)
	return b, nil
}

// Stat returns the size and modification time of the file at name.
func (f *FileIO) Stat(name string) (fs.FileInfo, error) {
	key, err := f.Key(name)
	if err != nil {
		return nil, pathError("stat", name, err)
	}
	info, err := f.st.Head(f.ctx, key)
	if err != nil {
		return nil, pathError("stat", name, err)
	}
	return fileInfo{info}, nil
}

// Remove deletes the file at name; a missing file is success.
func (f *FileIO) Remove(name string) error {
	key, err := f.Key(name)
	if err != nil {
		return pathError("remove", name, err)
	}
	f.kept.drop(key)
	if err := f.st.Delete(f.ctx, key, nil); err != nil {
		return pathError("remove", name, err)
	}
	return nil
}

// WriteFile writes p at name, replacing any file there.
func (f *FileIO) WriteFile(name string, p []byte) error {
	key, err := f.Key(name)
	if err != nil {
		return pathError("write", name, err)
	}
	return f.put(key, name, p, nil)
}

func (f *FileIO) put(key, name string, p []byte, opts *store.PutOptions) error {
	o := store.PutOptions{}
	if opts != nil {
		o = *opts
	}
	o.Size = int64(len(p))
	f.written.add(key) // before the put: one whose answer is lost may have landed
	if _, err := f.st.Put(f.ctx, key, bytes.NewReader(p), &o); err != nil {
		return pathError("write", name, err)
	}
	f.kept.put(key, p)
	return nil
}

// Create returns a writer of the file at name, which is put (replacing any file there) when
// the writer is closed.
func (f *FileIO) Create(name string) (icebergio.FileWriter, error) {
	key, err := f.Key(name)
	if err != nil {
		return nil, pathError("create", name, err)
	}
	return &writer{io: f, key: key, name: name}, nil
}

// writer buffers a file and puts it on Close.
type writer struct {
	io        *FileIO
	key, name string
	buf       bytes.Buffer
	closed    bool
}

func (w *writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, pathError("write", w.name, fs.ErrClosed)
	}
	return w.buf.Write(p)
}

func (w *writer) ReadFrom(r io.Reader) (int64, error) {
	if w.closed {
		return 0, pathError("write", w.name, fs.ErrClosed)
	}
	return w.buf.ReadFrom(r)
}

func (w *writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	return w.io.put(w.key, w.name, w.buf.Bytes(), nil)
}

// file is an open object: its bytes when small, else ranged reads pinned to its ETag.
type file struct {
	io        *FileIO
	name, key string
	info      store.ObjectInfo
	data      []byte // the whole object, when it was read whole

	pos    int64         // the offset of Read
	body   io.ReadCloser // a stream of the object from bodyAt, for Read
	bodyAt int64
}

func (r *file) Stat() (fs.FileInfo, error) { return fileInfo{r.info}, nil }

func (r *file) Read(p []byte) (int, error) {
	if r.data != nil || r.info.Size == 0 {
		n, err := r.ReadAt(p, r.pos)
		r.pos += int64(n)
		if n > 0 && err == io.EOF {
			err = nil
		}
		return n, err
	}
	if r.pos >= r.info.Size {
		return 0, io.EOF
	}
	if r.body == nil || r.bodyAt != r.pos {
		if r.body != nil {
			r.body.Close()
			r.body = nil
		}
		obj, err := r.io.st.Get(r.io.ctx, r.key, &store.GetOptions{IfMatch: r.info.ETag, Offset: r.pos})
		if err != nil {
			return 0, pathError("read", r.name, err)
		}
		r.body, r.bodyAt = obj, r.pos
	}
	n, err := r.body.Read(p)
	r.pos += int64(n)
	r.bodyAt += int64(n)
	if err != nil && err != io.EOF {
		return n, pathError("read", r.name, err)
	}
	if err == io.EOF && n == 0 && r.pos < r.info.Size {
		return 0, pathError("read", r.name, io.ErrUnexpectedEOF)
	}
	return n, nil
}

// ReadAt reads len(p) bytes at off: from memory, or by one ranged get. It is safe for
// parallel calls, as io.ReaderAt asks.
func (r *file) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, pathError("read", r.name, errors.New("negative offset"))
	}
	if off >= r.info.Size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.info.Size-off)
	if r.data != nil {
		n := copy(p, r.data[off:off+want])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	obj, err := r.io.st.Get(r.io.ctx, r.key, &store.GetOptions{IfMatch: r.info.ETag, Offset: off, Length: want})
	if err != nil {
		return 0, pathError("read", r.name, err)
	}
	defer obj.Close()
	n, err := io.ReadFull(obj, p[:want])
	if err != nil {
		return n, pathError("read", r.name, err)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (r *file) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.pos
	case io.SeekEnd:
		offset += r.info.Size
	default:
		return 0, pathError("seek", r.name, fmt.Errorf("whence %d", whence))
	}
	if offset < 0 {
		return 0, pathError("seek", r.name, errors.New("negative position"))
	}
	r.pos = offset
	return offset, nil
}

func (r *file) Close() error {
	if r.body != nil {
		err := r.body.Close()
		r.body = nil
		return err
	}
	return nil
}

// fileInfo is an object's metadata as an fs.FileInfo.
type fileInfo struct{ o store.ObjectInfo }

func (i fileInfo) Name() string       { return path.Base(i.o.Key) }
func (i fileInfo) Size() int64        { return i.o.Size }
func (i fileInfo) Mode() fs.FileMode  { return 0o444 }
func (i fileInfo) ModTime() time.Time { return i.o.LastModified }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return i.o }
