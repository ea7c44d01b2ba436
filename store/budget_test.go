package store_test

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/mem"
)

// inFlight counts the requests that reach the bucket it wraps at once, a read until its body
// is closed, and records the most it saw; each request takes a few milliseconds.
type inFlight struct {
	driver.Bucket
	now, most *atomic.Int64
}

func (f *inFlight) Unwrap() driver.Bucket { return f.Bucket }

func (f *inFlight) enter() func() {
	n := f.now.Add(1)
	for {
		m := f.most.Load()
		if n <= m || f.most.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(2 * time.Millisecond)
	return func() { f.now.Add(-1) }
}

func (f *inFlight) Head(ctx context.Context, key string) (driver.ObjectInfo, error) {
	defer f.enter()()
	return f.Bucket.Head(ctx, key)
}

type leaveOnClose struct {
	io.ReadCloser
	leave func()
}

func (l *leaveOnClose) Close() error { l.leave(); return l.ReadCloser.Close() }

func (f *inFlight) Get(ctx context.Context, key string, opts *driver.GetOptions) (*driver.Object, error) {
	leave := f.enter()
	o, err := f.Bucket.Get(ctx, key, opts)
	if err != nil {
		leave()
		return nil, err
	}
	o.ReadCloser = &leaveOnClose{ReadCloser: o.ReadCloser, leave: leave}
	return o, nil
}

// budgetRun opens three stores over one bucket, each decorated by wrap, and has 24
// goroutines Head and read an object through them at once; it returns the most requests seen
// in flight.
func budgetRun(t *testing.T, wrap func(driver.Bucket) driver.Bucket) int64 {
	m := mem.New()
	var now, most atomic.Int64
	var stores []*store.Store
	for range 3 {
		var b driver.Bucket = &inFlight{Bucket: m, now: &now, most: &most}
		if wrap != nil {
			b = wrap(b)
		}
		stores = append(stores, store.New(b, nil))
	}
	put(t, stores[0], "k")
	var wg sync.WaitGroup
	for i := range 24 {
		s := stores[i%3]
		wg.Go(func() {
			for range 5 {
				if _, err := s.Head(t.Context(), "k"); err != nil {
					t.Error(err)
				}
				o, err := s.Get(t.Context(), "k", nil)
				if err != nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Millisecond) // a body held open counts
				_, _ = io.Copy(io.Discard, o)
				o.Close()
			}
		})
	}
	wg.Wait()
	return most.Load()
}

// TestBudgetBoundsRequestsAcrossStores: with one budget of 4 over three stores, never more
// than 4 requests are in flight, a read until its body is closed; without it, the same
// load puts more in flight (so the count can see a budget that fails).
func TestBudgetBoundsRequestsAcrossStores(t *testing.T) {
	bg := store.NewBudget(4)
	if most := budgetRun(t, bg.Wrap); most > 4 || most < 2 {
		t.Fatalf("with a budget of 4: %d requests in flight at once", most)
	}
	if most := budgetRun(t, nil); most <= 4 {
		t.Fatalf("without a budget: only %d requests in flight at once; the check cannot fail", most)
	}
}

// TestBudgetWaitEndsWithContext: a request waiting for a slot gives up when its context ends.
func TestBudgetWaitEndsWithContext(t *testing.T) {
	bg := store.NewBudget(1)
	s := store.New(bg.Wrap(mem.New()), nil)
	put(t, s, "k")
	o, err := s.Get(t.Context(), "k", nil) // holds the one slot until closed
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.Head(ctx, "k"); err == nil {
		t.Fatal("a Head went through while the one slot was held")
	}
}
