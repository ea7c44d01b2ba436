package storetest

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/mem"
	"github.com/wharfdata/wharf/store/probe"
)

// quickPolicy is the default policy with every wait skipped.
func quickPolicy() *store.RetryPolicy {
	p := store.DefaultRetryPolicy()
	p.Sleep = func(ctx context.Context, d time.Duration) error { return ctx.Err() }
	return p
}

func wrap(b driver.Bucket) *store.Store { return store.New(b, quickPolicy()) }

// lying wraps a mem store to make it lie as real servers do, so that the suite is tested on
// what it must catch: lax ignores conditional deletes and pinned reads (as MinIO and
// fake-gcs-server do); missing answers every call as a bucket that does not exist.
type lying struct {
	driver.Bucket
	lax, missing bool
}

func (l *lying) Unwrap() driver.Bucket { return l.Bucket }

func (l *lying) gone(op, key string) error {
	return &driver.Error{Op: op, Key: key, Kind: driver.ErrBucketMissing}
}

func (l *lying) Get(ctx context.Context, key string, opts *driver.GetOptions) (*driver.Object, error) {
	if l.missing {
		return nil, l.gone("get", key)
	}
	if l.lax && opts != nil {
		o := *opts
		o.IfMatch = ""
		opts = &o
	}
	return l.Bucket.Get(ctx, key, opts)
}

func (l *lying) Head(ctx context.Context, key string) (driver.ObjectInfo, error) {
	if l.missing {
		return driver.ObjectInfo{}, l.gone("head", key)
	}
	return l.Bucket.Head(ctx, key)
}

func (l *lying) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if l.missing {
		return driver.ObjectInfo{}, l.gone("put", key)
	}
	return l.Bucket.Put(ctx, key, body, opts)
}

func (l *lying) Delete(ctx context.Context, key string, opts *driver.DeleteOptions) error {
	if l.missing {
		return l.gone("delete", key)
	}
	if l.lax {
		opts = &driver.DeleteOptions{}
	}
	return l.Bucket.Delete(ctx, key, opts)
}

func (l *lying) List(ctx context.Context, opts *driver.ListOptions) (driver.Page, error) {
	if l.missing {
		return driver.Page{}, l.gone("list", opts.Prefix)
	}
	return l.Bucket.List(ctx, opts)
}

func (l *lying) Copy(ctx context.Context, src, dst string, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if l.missing {
		return driver.ObjectInfo{}, l.gone("copy", dst)
	}
	return l.Bucket.(driver.Copier).Copy(ctx, src, dst, opts)
}

// MakeBucket makes a missing store's bucket exist.
func (l *lying) MakeBucket(context.Context) error {
	l.missing = false
	return nil
}

func memHarness(lax bool) Harness {
	want := map[string]string{
		probe.CapConditionalCreate: probe.Yes, probe.CapConditionalReplace: probe.Yes,
		probe.CapConditionalDelete: probe.Yes, probe.CapPinnedRead: probe.Yes,
		probe.CapUserMetadata: probe.Yes, probe.CapListAfterWrite: probe.Yes,
	}
	if lax {
		want[probe.CapConditionalDelete], want[probe.CapPinnedRead] = probe.No, probe.No
	}
	return Harness{
		Name: "mem-lying",
		Open: func(t *testing.T) *store.Store {
			return wrap(&lying{Bucket: mem.New(), lax: lax})
		},
		OpenMissing: func(t *testing.T) *store.Store {
			return wrap(&lying{Bucket: mem.New(), missing: true})
		},
		Want:      want,
		Large:     true,
		PartSize:  1 << 20,
		LargeSize: 5<<20 + 17,
	}
}

// TestSuiteOnLaxStore runs the suite on a store that ignores conditional deletes and pinned
// reads: the probe must say so, and the suite's own cases must agree.
func TestSuiteOnLaxStore(t *testing.T) {
	h := memHarness(true)
	h.Large = false
	Run(t, h)
}
