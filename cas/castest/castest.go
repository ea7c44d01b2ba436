// Package castest is the conformance suite every cas.Store passes: what the lease engine
// relies on of a compare-and-set store, checked against the real thing (the bucket on each
// store, NATS JetStream key-value, memory). Each implementation runs it in a few lines.
package castest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/store"
)

// Run checks the stores open returns: each case opens one of its own, with no records yet.
func Run(t *testing.T, open func(t *testing.T) cas.Store) {
	t.Run("create-get-update", func(t *testing.T) { createGetUpdate(t, open(t)) })
	t.Run("keys-are-distinct", func(t *testing.T) { distinctKeys(t, open(t)) })
	t.Run("values-kept-byte-for-byte", func(t *testing.T) { values(t, open(t)) })
	t.Run("one-winner-per-race", func(t *testing.T) { race(t, open(t)) })
	t.Run("keys-checked-first", func(t *testing.T) { badKeys(t, open(t)) })
	t.Run("cancelled-call-sends-nothing", func(t *testing.T) { cancelled(t, open(t)) })
	t.Run("describe", func(t *testing.T) {
		if open(t).Describe() == "" {
			t.Error("Describe is empty")
		}
	})
}

var ctx = context.Background()

func createGetUpdate(t *testing.T, c cas.Store) {
	key := "_wharf/leases/orders.json"
	if _, _, err := c.Get(ctx, "_wharf/leases/absent.json"); !errors.Is(err, cas.ErrNoRecord) {
		t.Fatalf("Get of a missing record: %v, want ErrNoRecord", err)
	}
	rev, err := c.Create(ctx, key, []byte(`{"v":1}`))
	if err != nil || rev == "" {
		t.Fatalf("Create: %q %v", rev, err)
	}
	if _, err := c.Create(ctx, key, []byte(`{"v":2}`)); !errors.Is(err, cas.ErrConflict) {
		t.Fatalf("second Create: %v, want ErrConflict", err)
	}
	v, got, err := c.Get(ctx, key)
	if err != nil || string(v) != `{"v":1}` || got != rev {
		t.Fatalf("Get = %s %q %v, want the first value at %q", v, got, err, rev)
	}
	rev2, err := c.Update(ctx, key, []byte(`{"v":3}`), rev)
	if err != nil || rev2 == rev || rev2 == "" {
		t.Fatalf("Update at the current revision: %q %v", rev2, err)
	}
	if _, err := c.Update(ctx, key, []byte(`{"v":4}`), rev); !errors.Is(err, cas.ErrConflict) {
		t.Fatalf("Update at a stale revision: %v, want ErrConflict", err)
	}
	if _, err := c.Update(ctx, "_wharf/leases/never.json", []byte(`{}`), rev); !errors.Is(err, cas.ErrConflict) {
		t.Fatalf("Update of a missing record: %v, want ErrConflict", err)
	}
	if _, err := c.Update(ctx, key, []byte(`{}`), ""); !errors.Is(err, cas.ErrConflict) {
		t.Fatalf("Update at no revision: %v, want ErrConflict", err)
	}
	v, got, err = c.Get(ctx, key)
	if err != nil || string(v) != `{"v":3}` || got != rev2 {
		t.Fatalf("after refused writes the record is %s at %q (%v), want the update at %q", v, got, err, rev2)
	}
	rev3, err := c.Update(ctx, key, []byte(`{"v":5}`), rev2)
	if err != nil || rev3 == rev2 {
		t.Fatalf("a second Update: %q %v", rev3, err)
	}
}

// distinctKeys: keys that differ only in where their dots and slashes are hold records of
// their own (an implementation that maps keys must map them one to one).
func distinctKeys(t *testing.T, c cas.Store) {
	keys := []string{"a/b.c", "a.b/c", "a/b/c", "a.b.c", "a/b-c", "a/b_c", "A/b/c"}
	for i, k := range keys {
		if _, err := c.Create(ctx, k, fmt.Appendf(nil, `{"i":%d}`, i)); err != nil {
			t.Fatalf("Create %s: %v", k, err)
		}
	}
	for i, k := range keys {
		v, _, err := c.Get(ctx, k)
		if err != nil || string(v) != fmt.Sprintf(`{"i":%d}`, i) {
			t.Errorf("Get %s = %s %v, want its own record", k, v, err)
		}
	}
}

func values(t *testing.T, c cas.Store) {
	cases := map[string][]byte{
		"v/empty":  {},
		"v/binary": {0, 0xff, 0xfe, '\n', '\r', 0x80},
		"v/large":  make([]byte, 256<<10),
	}
	for k, want := range cases {
		if _, err := c.Create(ctx, k, want); err != nil {
			t.Fatalf("Create %s: %v", k, err)
		}
		got, _, err := c.Get(ctx, k)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: read back %d bytes (%v), want the %d written", k, len(got), err, len(want))
		}
	}
}

// race lets 6 writers create, then update at one revision, the same key: one winner each,
// and the record is the winner's.
func race(t *testing.T, c cas.Store) {
	for round := range 3 {
		key := fmt.Sprintf("race/%06d", round)
		wins := func(fn func(w int) error) (n, winner int) {
			var mu sync.Mutex
			var wg sync.WaitGroup
			for w := range 6 {
				wg.Go(func() {
					err := fn(w)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						n, winner = n+1, w
					case !errors.Is(err, cas.ErrConflict):
						t.Errorf("writer %d: %v", w, err)
					}
				})
			}
			wg.Wait()
			return n, winner
		}
		n, w := wins(func(w int) error { _, err := c.Create(ctx, key, fmt.Appendf(nil, `{"w":%d}`, w)); return err })
		v, rev, err := c.Get(ctx, key)
		if n != 1 || err != nil || string(v) != fmt.Sprintf(`{"w":%d}`, w) {
			t.Fatalf("round %d: %d creates won; the record is %s (%v), want the winner's", round, n, v, err)
		}
		n, w = wins(func(w int) error { _, err := c.Update(ctx, key, fmt.Appendf(nil, `{"u":%d}`, w), rev); return err })
		v, _, err = c.Get(ctx, key)
		if n != 1 || err != nil || string(v) != fmt.Sprintf(`{"u":%d}`, w) {
			t.Fatalf("round %d: %d updates at one revision won; the record is %s (%v), want the winner's", round, n, v, err)
		}
	}
}

func badKeys(t *testing.T, c cas.Store) {
	for _, k := range []string{"", "/a", "a/", "a//b", "a/../b", "./a", "a b", "a*b", "a>b", "a=b", "ä"} {
		if _, _, err := c.Get(ctx, k); !errors.Is(err, store.ErrConfig) {
			t.Errorf("Get %q: %v, want ErrConfig", k, err)
		}
		if _, err := c.Create(ctx, k, []byte(`{}`)); !errors.Is(err, store.ErrConfig) {
			t.Errorf("Create %q: %v, want ErrConfig", k, err)
		}
		if _, err := c.Update(ctx, k, []byte(`{}`), "1"); !errors.Is(err, store.ErrConfig) {
			t.Errorf("Update %q: %v, want ErrConfig", k, err)
		}
	}
}

func cancelled(t *testing.T, c cas.Store) {
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Create(cctx, "gone/k", []byte(`{}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Create under a cancelled context: %v, want context.Canceled", err)
	}
	if _, _, err := c.Get(ctx, "gone/k"); !errors.Is(err, cas.ErrNoRecord) {
		t.Fatalf("after a cancelled Create: %v, want no record", err)
	}
	if _, _, err := c.Get(cctx, "gone/k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get under a cancelled context: %v, want context.Canceled", err)
	}
}
