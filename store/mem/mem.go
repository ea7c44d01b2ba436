package mem

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"sync"
	"time"

	"github.com/wharfdata/wharf/store/driver"
)

func init() {
	driver.Register(driver.Backend{Scheme: "mem", Parse: driver.BucketURL("mem://name/key")},
		func(_ context.Context, loc driver.Location, _ *Options, _ *driver.Common) (*Store, error) {
			return Named(loc.Bucket), nil
		})
}

// Options are the mem store's options: it has none.
type Options struct{}

// Check accepts the empty options.
func (*Options) Check(driver.Location, *driver.Common) error { return nil }

var (
	namedMu sync.Mutex
	named   = map[string]*Store{}
)

// Named returns the process-wide store called name, creating it on first use: mem://name
// opens it.
func Named(name string) *Store {
	namedMu.Lock()
	defer namedMu.Unlock()
	s, ok := named[name]
	if !ok {
		s = newStore("mem://" + name)
		named[name] = s
	}
	return s
}

// New returns an empty private driver.
func New() *Store { return newStore("mem://") }

// Store is an in-memory driver. Its zero value is not usable: call New or Named.
type Store struct {
	location string

	mu   sync.Mutex
	objs map[string]*object
	seq  uint64
}

type object struct {
	data []byte // never modified once stored
	info driver.ObjectInfo
}

func newStore(location string) *Store {
	return &Store{location: location, objs: map[string]*object{}}
}

// Get returns the object at key, or the byte range opts asks for. A range starting at or past
// the end returns an empty body.
func (s *Store) Get(ctx context.Context, key string, opts *driver.GetOptions) (*driver.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := *opts
	s.mu.Lock()
	obj, ok := s.objs[key]
	s.mu.Unlock()
	if !ok {
		return nil, notExist("get", key)
	}
	if o.IfMatch != "" && o.IfMatch != obj.info.ETag {
		return nil, stale("get", key, o.IfMatch)
	}
	data := obj.data[min(o.Offset, int64(len(obj.data))):]
	if o.Length > 0 && o.Length < int64(len(data)) {
		data = data[:o.Length]
	}
	return &driver.Object{Info: cloneInfo(obj.info), ReadCloser: io.NopCloser(bytes.NewReader(data))}, nil
}

// Head returns the object's metadata.
func (s *Store) Head(ctx context.Context, key string) (driver.ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return driver.ObjectInfo{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objs[key]
	if !ok {
		return driver.ObjectInfo{}, notExist("head", key)
	}
	return cloneInfo(obj.info), nil
}

// Put reads body whole, then stores it if opts' condition holds.
func (s *Store) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return driver.ObjectInfo{}, err
	}
	data, err := readBody(ctx, key, body)
	if err != nil {
		return driver.ObjectInfo{}, err
	}
	o := *opts
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check("put", key, &o); err != nil {
		return driver.ObjectInfo{}, err
	}
	return s.store(key, data, &o), nil
}

// Copy copies src to dst; opts' condition applies to dst. The content type, headers and
// metadata opts gives replace src's; the rest are src's (driver.Carry).
func (s *Store) Copy(ctx context.Context, src, dst string, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return driver.ObjectInfo{}, err
	}
	o := *opts
	s.mu.Lock()
	defer s.mu.Unlock()
	from, ok := s.objs[src]
	if !ok {
		return driver.ObjectInfo{}, notExist("copy", src)
	}
	if err := s.check("copy", dst, &o); err != nil {
		return driver.ObjectInfo{}, err
	}
	driver.Carry(&o, from.info)
	return s.store(dst, from.data, &o), nil
}

// Delete removes key; with opts.IfMatch only when key holds that ETag (a missing key then
// fails the condition).
func (s *Store) Delete(ctx context.Context, key string, opts *driver.DeleteOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if opts.IfMatch != "" {
		if err := s.check("delete", key, &driver.PutOptions{IfMatch: opts.IfMatch}); err != nil {
			return err
		}
	}
	delete(s.objs, key)
	return nil
}

// MakeBucket succeeds: every mem store exists.
func (s *Store) MakeBucket(ctx context.Context) error { return ctx.Err() }

// Close does nothing: a named store lives as long as the process.
func (s *Store) Close() error { return nil }

// Describe names the driver.
func (s *Store) Describe() driver.Description {
	return driver.Description{Scheme: "mem", Location: s.location}
}

// check applies o's condition to key; s.mu is held.
func (s *Store) check(op, key string, o *driver.PutOptions) error {
	cur, exists := s.objs[key]
	switch {
	case o.IfNoneMatch && exists:
		return &driver.Error{Op: op, Key: key, Kind: driver.ErrPreconditionFailed, Err: errors.New("key exists")}
	case o.IfMatch != "" && !exists:
		return &driver.Error{Op: op, Key: key, Kind: driver.ErrPreconditionFailed, Err: errors.New("key does not exist")}
	case o.IfMatch != "" && cur.info.ETag != o.IfMatch:
		return stale(op, key, o.IfMatch)
	}
	return nil
}

// store records data at key with a fresh ETag and o's content type, headers and metadata;
// s.mu is held.
func (s *Store) store(key string, data []byte, o *driver.PutOptions) driver.ObjectInfo {
	s.seq++
	h := sha256.New()
	h.Write(data)
	h.Write(binary.BigEndian.AppendUint64(nil, s.seq))
	info := driver.ObjectInfo{
		Key:          key,
		Size:         int64(len(data)),
		ETag:         hex.EncodeToString(h.Sum(nil)[:16]),
		LastModified: time.Now().UTC(),
		ContentType:  o.ContentType,
		Headers:      o.Headers,
		Metadata:     maps.Clone(o.Metadata),
	}
	s.objs[key] = &object{data: data, info: info}
	return cloneInfo(info)
}

func readBody(ctx context.Context, key string, body io.Reader) ([]byte, error) {
	if body == nil {
		return []byte{}, nil
	}
	var buf bytes.Buffer
	_, err := buf.ReadFrom(driver.ContextReader(ctx, body))
	if err == nil {
		return buf.Bytes(), nil
	}
	return nil, driver.BodyError(ctx, "put", key, err)
}

func cloneInfo(i driver.ObjectInfo) driver.ObjectInfo {
	i.Metadata = maps.Clone(i.Metadata)
	return i
}

func notExist(op, key string) error {
	return &driver.Error{Op: op, Key: key, Kind: driver.ErrNotExist}
}

func stale(op, key, etag string) error {
	return &driver.Error{Op: op, Key: key, Kind: driver.ErrPreconditionFailed,
		Err: fmt.Errorf("current ETag is not %q", etag)}
}
