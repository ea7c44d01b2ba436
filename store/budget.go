package store

import (
	"context"
	"io"
	"sync"

	"github.com/wharfdata/wharf/store/driver"
)

// Budget bounds the requests in flight across every store it wraps: one budget shared by the
// stores of several jobs in one process (wharf load --pool) keeps the process at its bound
// however many jobs run. A request holds a slot from its call until it returns, and a read
// until its body is closed; a caller waiting for a slot gives up when its context ends. It
// counts the calls of a bucket's base methods (Get, Head, Put, Delete, List); a capability
// found through Unwrap (a server-side copy, a batch delete) is not counted.
type Budget struct {
	slots chan struct{}
}

// NewBudget returns a budget of n requests in flight (at least 1).
func NewBudget(n int) *Budget { return &Budget{slots: make(chan struct{}, max(1, n))} }

// Wrap returns b decorated to take a slot of the budget for each request: a Config.Wrap, to be
// chained after any other.
func (bg *Budget) Wrap(b driver.Bucket) driver.Bucket { return &budgetBucket{Bucket: b, bg: bg} }

func (bg *Budget) take(ctx context.Context) error {
	select {
	case bg.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (bg *Budget) give() { <-bg.slots }

type budgetBucket struct {
	driver.Bucket
	bg *Budget
}

func (b *budgetBucket) Unwrap() driver.Bucket { return b.Bucket }

func (b *budgetBucket) Get(ctx context.Context, key string, opts *driver.GetOptions) (*driver.Object, error) {
	if err := b.bg.take(ctx); err != nil {
		return nil, err
	}
	o, err := b.Bucket.Get(ctx, key, opts)
	if err != nil {
		b.bg.give()
		return nil, err
	}
	o.ReadCloser = &slotBody{ReadCloser: o.ReadCloser, give: sync.OnceFunc(b.bg.give)}
	return o, nil
}

func (b *budgetBucket) Head(ctx context.Context, key string) (driver.ObjectInfo, error) {
	if err := b.bg.take(ctx); err != nil {
		return driver.ObjectInfo{}, err
	}
	defer b.bg.give()
	return b.Bucket.Head(ctx, key)
}

func (b *budgetBucket) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if err := b.bg.take(ctx); err != nil {
		return driver.ObjectInfo{}, err
	}
	defer b.bg.give()
	return b.Bucket.Put(ctx, key, body, opts)
}

func (b *budgetBucket) Delete(ctx context.Context, key string, opts *driver.DeleteOptions) error {
	if err := b.bg.take(ctx); err != nil {
		return err
	}
	defer b.bg.give()
	return b.Bucket.Delete(ctx, key, opts)
}

func (b *budgetBucket) List(ctx context.Context, opts *driver.ListOptions) (driver.Page, error) {
	if err := b.bg.take(ctx); err != nil {
		return driver.Page{}, err
	}
	defer b.bg.give()
	return b.Bucket.List(ctx, opts)
}

// slotBody gives its slot back when the body is closed (once).
type slotBody struct {
	io.ReadCloser
	give func()
}

func (s *slotBody) Close() error {
	defer s.give()
	return s.ReadCloser.Close()
}
