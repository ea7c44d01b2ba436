package store_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/mem"
)

// batcher is a decorator that intercepts DeleteMany only, recording the batches it is given.
type batcher struct {
	driver.Bucket
	batches [][]string
}

func (b *batcher) Unwrap() driver.Bucket { return b.Bucket }

func (b *batcher) DeleteMany(ctx context.Context, keys []string) error {
	b.batches = append(b.batches, slices.Clone(keys))
	for _, k := range keys {
		if err := b.Bucket.Delete(ctx, k, &driver.DeleteOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// counting is a decorator that intercepts nothing: every capability of what it wraps must
// still be found through it.
type counting struct {
	driver.Bucket
}

func (c *counting) Unwrap() driver.Bucket { return c.Bucket }

func put(t *testing.T, s *store.Store, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, err := s.Put(t.Context(), k, strings.NewReader("x"), &store.PutOptions{Size: 1}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDeleteManyBatchesBelowThePrefix(t *testing.T) {
	b := &batcher{Bucket: mem.New()}
	root := store.New(b, nil)
	put(t, root, "p/a", "p/b", "q/c")
	s := root.Sub("p")
	if err := s.DeleteMany(t.Context(), []string{"a", "b", "missing"}); err != nil {
		t.Fatal(err)
	}
	if len(b.batches) != 1 || !slices.Equal(b.batches[0], []string{"p/a", "p/b", "p/missing"}) {
		t.Errorf("batches %q, want one batch with the prefix added", b.batches)
	}
	left, err := root.ListAll(t.Context(), "")
	if err != nil || len(left) != 1 || left[0].Key != "q/c" {
		t.Errorf("left %+v %v, want only q/c", left, err)
	}
	if err := s.DeleteMany(t.Context(), []string{"../x"}); !errors.Is(err, store.ErrKeyInvalid) {
		t.Errorf("bad key: %v, want ErrKeyInvalid", err)
	}
}

func TestDeleteManyFallsBackToDeletes(t *testing.T) {
	s := store.New(mem.New(), nil)
	put(t, s, "a")
	if err := s.DeleteMany(t.Context(), []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(t.Context(), "a"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("a still there: %v", err)
	}
}

// TestCapabilitiesThroughDecorators: a decorator that implements no capability hides none of
// the wrapped bucket's (MakeBucket, Copy server-side), so nothing is forwarded by hand.
func TestCapabilitiesThroughDecorators(t *testing.T) {
	m := mem.New()
	s := store.New(&counting{Bucket: m}, nil).Sub("dir")
	if err := s.MakeBucket(t.Context()); err != nil {
		t.Fatalf("MakeBucket through a decorator: %v", err)
	}
	put(t, s, "a")
	info, err := s.Copy(t.Context(), "a", "b", nil)
	if err != nil || info.Key != "b" {
		t.Fatalf("Copy through a decorator: %+v %v", info, err)
	}
	if _, err := m.Head(t.Context(), "dir/b"); err != nil {
		t.Errorf("the copy is not at dir/b in the bucket: %v", err)
	}
	var noMaker struct{ driver.Bucket }
	noMaker.Bucket = &plain{m}
	if err := store.New(noMaker, nil).MakeBucket(t.Context()); !errors.Is(err, store.ErrUnsupported) {
		t.Errorf("MakeBucket on a bucket without it: %v, want ErrUnsupported", err)
	}
}

// plain hides every optional capability of a mem store.
type plain struct{ m *mem.Store }

func (p *plain) Get(ctx context.Context, k string, o *driver.GetOptions) (*driver.Object, error) {
	return p.m.Get(ctx, k, o)
}
func (p *plain) Head(ctx context.Context, k string) (driver.ObjectInfo, error) {
	return p.m.Head(ctx, k)
}
func (p *plain) Put(ctx context.Context, k string, b io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	return p.m.Put(ctx, k, b, o)
}
func (p *plain) Delete(ctx context.Context, k string, o *driver.DeleteOptions) error {
	return p.m.Delete(ctx, k, o)
}
func (p *plain) List(ctx context.Context, o *driver.ListOptions) (driver.Page, error) {
	return p.m.List(ctx, o)
}
func (p *plain) Describe() driver.Description { return p.m.Describe() }
func (p *plain) Close() error                 { return nil }

// TestCopyStreamsWithoutCopier: without a server-side copy, Copy streams through Get and
// Put, keeping content type, headers and metadata.
func TestCopyStreamsWithoutCopier(t *testing.T) {
	s := store.New(&plain{mem.New()}, nil)
	_, err := s.Put(t.Context(), "src", strings.NewReader("gz"), &store.PutOptions{Size: 2,
		ContentType: "application/gzip", Metadata: map[string]string{"owner": "me"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Copy(t.Context(), "src", "dst", nil); err != nil {
		t.Fatal(err)
	}
	info, err := s.Head(t.Context(), "dst")
	if err != nil || info.ContentType != "application/gzip" || info.Metadata["owner"] != "me" {
		t.Errorf("streamed copy: %+v %v", info, err)
	}
}

// A store below a prefix lists with nil options like any other.
func TestSubListNilOptions(t *testing.T) {
	s := store.New(mem.New(), nil).Sub("p/")
	put(t, s, "k")
	page, err := s.List(t.Context(), nil)
	if err != nil || len(page.Objects) != 1 || page.Objects[0].Key != "k" {
		t.Fatalf("List(nil) = %+v, %v", page, err)
	}
}
