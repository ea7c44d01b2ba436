package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
)

// quickPolicy is the default policy with every wait skipped.
func quickPolicy() *store.RetryPolicy {
	p := store.DefaultRetryPolicy()
	p.Sleep = func(ctx context.Context, d time.Duration) error { return ctx.Err() }
	return p
}

func wrap(s store.Store) store.Store { return store.Validate(store.Retry(s, quickPolicy())) }

func memHarness(lax bool) Harness {
	want := map[string]string{
		store.CapConditionalCreate: store.Yes, store.CapConditionalReplace: store.Yes,
		store.CapConditionalDelete: store.Yes, store.CapPinnedRead: store.Yes,
		store.CapUserMetadata: store.Yes, store.CapListAfterWrite: store.Yes,
		CapConditionalCopy: store.Yes,
	}
	if lax {
		want[store.CapConditionalDelete], want[store.CapPinnedRead] = store.No, store.No
	}
	return Harness{
		Name: "memtest",
		Open: func(t *testing.T) store.Store {
			m := newMemForTest()
			m.lax = lax
			return wrap(m)
		},
		OpenMissing: func(t *testing.T) store.Store {
			m := newMemForTest()
			m.missing = true
			return wrap(m)
		},
		Want:      want,
		Large:     true,
		PartSize:  1 << 20,
		LargeSize: 5<<20 + 17,
	}
}

func TestSuiteOnMemForTest(t *testing.T) { Run(t, memHarness(false)) }

// TestSuiteOnLaxStore runs the suite on a store that ignores conditional deletes and pinned
// reads: the probe must say so, and the suite's own cases must agree.
func TestSuiteOnLaxStore(t *testing.T) {
	h := memHarness(true)
	h.Large = false
	Run(t, h)
}
