package file_test

import (
	"path/filepath"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/file"
	"github.com/wharfdata/wharf/store/probe"
	"github.com/wharfdata/wharf/store/storetest"
)

func open(t *testing.T, dir string) *store.Store {
	t.Helper()
	fs, err := file.New(dir)
	if err != nil {
		t.Fatalf("file.New(%q): %v", dir, err)
	}
	s := store.New(fs, store.DefaultRetryPolicy())
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		NoTrailingSlash: true,
		Name:            "file",
		Open:            func(t *testing.T) *store.Store { return open(t, t.TempDir()) },
		OpenMissing:     func(t *testing.T) *store.Store { return open(t, filepath.Join(t.TempDir(), "absent")) },
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
	_ driver.Bucket       = (*file.Store)(nil)
	_ driver.Copier       = (*file.Store)(nil)
	_ driver.BucketMaker  = (*file.Store)(nil)
	_ driver.HashVerifier = (*file.Store)(nil)
)
