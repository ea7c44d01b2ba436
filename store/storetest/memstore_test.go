package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/wharfdata/wharf/store"
)

// memForTest is a minimal map-based store that lets the suite run on itself. lax makes it
// ignore conditional deletes and pinned reads (as MinIO and fake-gcs-server do), so both
// verdict branches of the suite are exercised.
type memForTest struct {
	mu      sync.Mutex
	objs    map[string]memObj
	seq     int
	missing bool // the "bucket" does not exist
	lax     bool
}

type memObj struct {
	data []byte
	info store.ObjectInfo
}

func newMemForTest() *memForTest { return &memForTest{objs: map[string]memObj{}} }

func (m *memForTest) fail(op, key string, kind *store.Kind) error {
	return &store.Error{Op: op, Key: key, Kind: kind, Status: 0}
}

// check returns the context's error or ErrBucketMissing; it is called with m.mu held.
func (m *memForTest) check(ctx context.Context, op, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.missing {
		return m.fail(op, key, store.ErrBucketMissing)
	}
	return nil
}

func (m *memForTest) Close() error { return nil }

func (m *memForTest) Describe() store.Description {
	return store.Description{Scheme: "memtest", Location: "memtest://"}
}

func (m *memForTest) Head(ctx context.Context, key string) (store.ObjectInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx, "head", key); err != nil {
		return store.ObjectInfo{}, err
	}
	o, ok := m.objs[key]
	if !ok {
		return store.ObjectInfo{}, m.fail("head", key, store.ErrNotExist)
	}
	return cloneInfo(o.info), nil
}

func (m *memForTest) Get(ctx context.Context, key string, opts *store.GetOptions) (*store.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx, "get", key); err != nil {
		return nil, err
	}
	o, ok := m.objs[key]
	if !ok {
		return nil, m.fail("get", key, store.ErrNotExist)
	}
	data := o.data
	if opts != nil {
		if opts.IfMatch != "" && opts.IfMatch != o.info.ETag && !m.lax {
			return nil, m.fail("get", key, store.ErrPreconditionFailed)
		}
		data = data[min(opts.Offset, int64(len(data))):]
		if opts.Length > 0 {
			data = data[:min(opts.Length, int64(len(data)))]
		}
	}
	return &store.Object{Info: cloneInfo(o.info), ReadCloser: io.NopCloser(bytes.NewReader(data))}, nil
}

func (m *memForTest) Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error) {
	var data []byte
	if body != nil {
		var err error
		if data, err = io.ReadAll(body); err != nil {
			return store.ObjectInfo{}, &store.Error{Op: "put", Key: key, Kind: store.ErrUnavailable, Err: fmt.Errorf("reading body: %w", err)}
		}
	}
	if opts == nil {
		opts = &store.PutOptions{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx, "put", key); err != nil {
		return store.ObjectInfo{}, err
	}
	old, exists := m.objs[key]
	if (opts.IfNoneMatch && exists) || (opts.IfMatch != "" && (!exists || old.info.ETag != opts.IfMatch)) {
		return store.ObjectInfo{}, m.fail("put", key, store.ErrPreconditionFailed)
	}
	m.seq++
	sum := sha256.Sum256(data)
	info := store.ObjectInfo{
		Key: key, Size: int64(len(data)), ETag: fmt.Sprintf("%x-%d", sum[:8], m.seq),
		LastModified: time.Now().UTC().Truncate(time.Second), ContentType: opts.ContentType,
		Metadata: maps.Clone(opts.Metadata),
	}
	m.objs[key] = memObj{data: data, info: info}
	return cloneInfo(info), nil
}

func (m *memForTest) Delete(ctx context.Context, key string, opts *store.DeleteOptions) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx, "delete", key); err != nil {
		return err
	}
	o, exists := m.objs[key]
	if opts != nil && opts.IfMatch != "" && !m.lax && (!exists || o.info.ETag != opts.IfMatch) {
		return m.fail("delete", key, store.ErrPreconditionFailed)
	}
	delete(m.objs, key)
	return nil
}

// List pages by key: the token is the last key or prefix handed out.
func (m *memForTest) List(ctx context.Context, opts *store.ListOptions) (store.Page, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx, "list", opts.Prefix); err != nil {
		return store.Page{}, err
	}
	limit := opts.MaxKeys
	if limit <= 0 {
		limit = 1000
	}
	var page store.Page
	for _, k := range m.sortedKeys() {
		if !strings.HasPrefix(k, opts.Prefix) || k <= opts.Token ||
			(strings.HasSuffix(opts.Token, "/") && strings.HasPrefix(k, opts.Token)) {
			continue
		}
		if len(page.Objects)+len(page.Prefixes) == limit {
			page.Next = last(page)
			break
		}
		if i := strings.Index(k[len(opts.Prefix):], opts.Delimiter); opts.Delimiter != "" && i >= 0 {
			p := k[:len(opts.Prefix)+i+1]
			if n := len(page.Prefixes); n == 0 || page.Prefixes[n-1] != p {
				page.Prefixes = append(page.Prefixes, p)
			}
			continue
		}
		page.Objects = append(page.Objects, cloneInfo(m.objs[k].info))
	}
	return page, nil
}

// last returns the greatest key or prefix on page.
func last(page store.Page) string {
	var s string
	if n := len(page.Objects); n > 0 {
		s = page.Objects[n-1].Key
	}
	if n := len(page.Prefixes); n > 0 && page.Prefixes[n-1] > s {
		s = page.Prefixes[n-1]
	}
	return s
}

func (m *memForTest) sortedKeys() []string {
	keys := make([]string, 0, len(m.objs))
	for k := range m.objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func cloneInfo(i store.ObjectInfo) store.ObjectInfo {
	i.Metadata = maps.Clone(i.Metadata)
	return i
}
