package s3

import (
	"context"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/storetest"
)

// TestMinIOConformance runs the store conformance suite against MinIO, each case on a fresh
// bucket opened the way store.Open opens it.
func TestMinIOConformance(t *testing.T) {
	srv := testenv.MinIO(t)
	cfg := minioConfig(t, srv)
	open := func(t *testing.T, name string, make bool) store.Store {
		s, err := store.OpenURL(context.Background(), "s3://"+name, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if make {
			if err := store.MakeBucket(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			b, _ := store.As[*Bucket](s)
			t.Cleanup(func() { removeBucket(t, b) })
		}
		return s
	}
	storetest.Run(t, storetest.Harness{
		Name:        "s3-minio",
		Open:        func(t *testing.T) store.Store { return open(t, uniqueBucket(t), true) },
		OpenMissing: func(t *testing.T) store.Store { return open(t, uniqueBucket(t)+"-missing", false) },
		OpenUploads: func(t *testing.T, s store.Store) int {
			b, ok := store.As[*Bucket](s)
			if !ok {
				t.Fatal("not an s3 store")
			}
			return openUploads(t, b)
		},
		Want: map[string]string{
			store.CapConditionalCreate:   store.Yes,
			store.CapConditionalReplace:  store.Yes,
			store.CapConditionalDelete:   store.No, // MinIO deletes anyway
			store.CapPinnedRead:          store.Yes,
			store.CapUserMetadata:        store.Yes,
			storetest.CapConditionalCopy: store.No, // MinIO overwrites
		},
		Large:    true,
		PartSize: MinPartSize,
	})
}
