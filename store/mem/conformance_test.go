package mem_test

import (
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
	"github.com/wharfdata/wharf/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Name: "mem",
		Open: func(t *testing.T) store.Store {
			s := store.Validate(store.Retry(mem.New(), store.DefaultRetryPolicy()))
			t.Cleanup(func() { s.Close() })
			return s
		},
		Want: map[string]string{
			store.CapConditionalCreate: store.Yes, store.CapConditionalReplace: store.Yes,
			store.CapConditionalDelete: store.Yes, store.CapPinnedRead: store.Yes,
			store.CapUserMetadata: store.Yes, store.CapListAfterWrite: store.Yes,
			storetest.CapConditionalCopy: store.Yes,
		},
		// No multipart here: a body of a few MiB covers the large cases; the S3
		// harnesses use the default size, which spans several parts.
		Large:     true,
		LargeSize: 8<<20 + 1,
	})
}
