package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

// batcher records the batches it is given, below the wrappers.
type batcher struct {
	store.Store
	batches [][]string
}

func (b *batcher) DeleteMany(ctx context.Context, keys []string) error {
	b.batches = append(b.batches, slices.Clone(keys))
	return store.DeleteMany(ctx, b.Store, keys)
}

func TestDeleteManyThroughWrappers(t *testing.T) {
	ctx := context.Background()
	m := mem.New()
	for _, k := range []string{"p/a", "p/b", "q/c"} {
		if _, err := m.Put(ctx, k, strings.NewReader("x"), &store.PutOptions{Size: 1}); err != nil {
			t.Fatal(err)
		}
	}
	b := &batcher{Store: m}
	s := store.WithPrefix(store.Validate(store.Retry(b, store.DefaultRetryPolicy())), "p/")
	if err := store.DeleteMany(ctx, s, []string{"a", "b", "missing"}); err != nil {
		t.Fatal(err)
	}
	if len(b.batches) != 1 || !slices.Equal(b.batches[0], []string{"p/a", "p/b", "p/missing"}) {
		t.Errorf("batches %q, want one batch with the prefix added", b.batches)
	}
	left, err := store.ListAll(ctx, m, "")
	if err != nil || len(left) != 1 || left[0].Key != "q/c" {
		t.Errorf("left %+v %v, want only q/c", left, err)
	}
	if err := store.DeleteMany(ctx, s, []string{"../x"}); !errors.Is(err, store.ErrKeyInvalid) {
		t.Errorf("bad key: %v, want ErrKeyInvalid", err)
	}
}

func TestDeleteManyFallsBack(t *testing.T) {
	ctx := context.Background()
	m := mem.New()
	_, _ = m.Put(ctx, "a", strings.NewReader("x"), &store.PutOptions{Size: 1})
	s := store.Validate(store.Retry(m, store.DefaultRetryPolicy()))
	if err := store.DeleteMany(ctx, s, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Head(ctx, "a"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("a still there: %v", err)
	}
}

// A prefixed store lists with nil options like any other.
func TestPrefixedListNilOptions(t *testing.T) {
	s := store.WithPrefix(mem.New(), "p/")
	if _, err := s.Put(context.Background(), "k", strings.NewReader("v"), nil); err != nil {
		t.Fatal(err)
	}
	page, err := s.List(context.Background(), nil)
	if err != nil || len(page.Objects) != 1 || page.Objects[0].Key != "k" {
		t.Fatalf("List(nil) = %+v, %v", page, err)
	}
}
