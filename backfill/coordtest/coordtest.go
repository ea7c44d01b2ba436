// Package coordtest is the conformance suite every backfill coordinator passes: what the
// backfill engine relies on of a Coordinator, checked against the real thing (the bucket on
// each store, NATS JetStream, solo).
package coordtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/wharfdata/wharf/backfill"
)

// Run checks c, a coordinator of a fresh job (no records yet).
func Run(t *testing.T, c backfill.Coordinator) {
	ctx := context.Background()
	t.Run("create-get-update", func(t *testing.T) {
		if _, _, err := c.Get(ctx, "state/absent"); !errors.Is(err, backfill.ErrNoRecord) {
			t.Fatalf("Get of a missing record: %v, want ErrNoRecord", err)
		}
		rev, err := c.Create(ctx, "state/a", []byte(`{"v":1}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Create(ctx, "state/a", []byte(`{"v":2}`)); !errors.Is(err, backfill.ErrConflict) {
			t.Fatalf("second Create: %v, want ErrConflict", err)
		}
		v, got, err := c.Get(ctx, "state/a")
		if err != nil || string(v) != `{"v":1}` || got != rev {
			t.Fatalf("Get = %s %q %v, want the first value at %q", v, got, err, rev)
		}
		rev2, err := c.Update(ctx, "state/a", []byte(`{"v":3}`), rev)
		if err != nil || rev2 == rev {
			t.Fatalf("Update at the current revision: %q %v", rev2, err)
		}
		if _, err := c.Update(ctx, "state/a", []byte(`{"v":4}`), rev); !errors.Is(err, backfill.ErrConflict) {
			t.Fatalf("Update at a stale revision: %v, want ErrConflict", err)
		}
		if _, err := c.Update(ctx, "state/never", []byte(`{}`), rev); !errors.Is(err, backfill.ErrConflict) {
			t.Fatalf("Update of a missing record: %v, want ErrConflict", err)
		}
		if v, _, _ := c.Get(ctx, "state/a"); string(v) != `{"v":3}` {
			t.Fatalf("after a refused update the record is %s", v)
		}
	})
	t.Run("one-winner-per-race", func(t *testing.T) { race(t, c) })
	if c.Describe() == "" {
		t.Error("Describe is empty")
	}
}

// race lets 6 writers create, then update at one revision, the same key: one winner each.
func race(t *testing.T, c backfill.Coordinator) {
	ctx := context.Background()
	for round := range 3 {
		key := fmt.Sprintf("plans/race/%06d", round)
		wins := func(fn func(w int) error) int {
			var mu sync.Mutex
			var wg sync.WaitGroup
			n := 0
			for w := range 6 {
				wg.Go(func() {
					err := fn(w)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						n++
					case !errors.Is(err, backfill.ErrConflict):
						t.Errorf("writer %d: %v", w, err)
					}
				})
			}
			wg.Wait()
			return n
		}
		if n := wins(func(w int) error { _, err := c.Create(ctx, key, fmt.Appendf(nil, `{"w":%d}`, w)); return err }); n != 1 {
			t.Fatalf("round %d: %d creates won, want 1", round, n)
		}
		_, rev, err := c.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if n := wins(func(w int) error { _, err := c.Update(ctx, key, fmt.Appendf(nil, `{"u":%d}`, w), rev); return err }); n != 1 {
			t.Fatalf("round %d: %d updates at one revision won, want 1", round, n)
		}
	}
}
