package mem_test

import (
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/mem"
	"github.com/wharfdata/wharf/store/probe"
	"github.com/wharfdata/wharf/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Name: "mem",
		Open: func(t *testing.T) *store.Store {
			s := store.New(mem.New(), store.DefaultRetryPolicy())
			t.Cleanup(func() { s.Close() })
			return s
		},
		Want: map[string]string{
			probe.CapConditionalCreate: probe.Yes, probe.CapConditionalReplace: probe.Yes,
			probe.CapConditionalDelete: probe.Yes, probe.CapPinnedRead: probe.Yes,
			probe.CapUserMetadata: probe.Yes, probe.CapListAfterWrite: probe.Yes,
		},
		// No multipart here: a body of a few MiB covers the large cases; the S3
		// harnesses use the default size, which spans several parts.
		Large:     true,
		LargeSize: 8<<20 + 1,
	})
}

// The capabilities the portable store learns from this backend when it opens one.
var (
	_ driver.Bucket      = (*mem.Store)(nil)
	_ driver.Copier      = (*mem.Store)(nil)
	_ driver.BucketMaker = (*mem.Store)(nil)
)
