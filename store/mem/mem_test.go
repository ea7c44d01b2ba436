package mem_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

// The contract itself is the conformance suite's (conformance_test.go); these are what only
// the mem store promises.

var ctx = context.Background()

func put(t *testing.T, s *store.Store, key, body string) {
	t.Helper()
	if _, err := s.Put(ctx, key, strings.NewReader(body), nil); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

func read(t *testing.T, s *store.Store, key string) string {
	t.Helper()
	obj, err := s.Get(ctx, key, nil)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNamedStoresAreShared(t *testing.T) {
	a, err := store.Open(ctx, "mem://shared-test/p", nil)
	if err != nil {
		t.Fatal(err)
	}
	put(t, a, "k", "v")
	if got := read(t, store.New(mem.Named("shared-test"), nil), "p/k"); got != "v" {
		t.Fatalf("named store sees %q", got)
	}
	b, err := store.Open(ctx, "mem://shared-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, b, "p/k"); got != "v" {
		t.Fatalf("second open sees %q", got)
	}
	if d := b.Describe(); d.Scheme != "mem" || d.Location != "mem://shared-test" {
		t.Errorf("describe = %+v", d)
	}
	if err := b.MakeBucket(ctx); err != nil {
		t.Errorf("make bucket: %v", err)
	}
}
