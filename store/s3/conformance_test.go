package s3

import (
	"context"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/storetest"
)

// conformance runs the store conformance suite against the S3 server cfg points at, each case
// on a fresh bucket opened the way store.Open opens it. want is what the server is known to
// do with each condition; the suite holds the probe and its own observations to it.
func conformance(t *testing.T, name string, cfg store.Config, want map[string]string) {
	open := func(t *testing.T, bucket string, make bool) store.Store {
		s, err := store.OpenURL(context.Background(), "s3://"+bucket, cfg)
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
		Name:        name,
		Open:        func(t *testing.T) store.Store { return open(t, uniqueBucket(t), true) },
		OpenMissing: func(t *testing.T) store.Store { return open(t, uniqueBucket(t)+"-missing", false) },
		OpenUploads: func(t *testing.T, s store.Store) int {
			b, ok := store.As[*Bucket](s)
			if !ok {
				t.Fatal("not an s3 store")
			}
			return openUploads(t, b)
		},
		Want:     want,
		Large:    true,
		PartSize: MinPartSize,
	})
}

// TestMinIOConformance: MinIO enforces conditional create, replace and pinned reads, but
// deletes on a DELETE with a stale If-Match and overwrites on a conditional copy.
func TestMinIOConformance(t *testing.T) {
	srv := testenv.MinIO(t)
	conformance(t, "s3-minio", minioConfig(t, srv), map[string]string{
		store.CapConditionalCreate:   store.Yes,
		store.CapConditionalReplace:  store.Yes,
		store.CapConditionalDelete:   store.No, // MinIO deletes anyway
		store.CapPinnedRead:          store.Yes,
		store.CapUserMetadata:        store.Yes,
		store.CapListAfterWrite:      store.Yes,
		storetest.CapConditionalCopy: store.No, // MinIO overwrites
	})
}

// TestSeaweedFSConformance: a second, independent implementation of the S3 API.
func TestSeaweedFSConformance(t *testing.T) {
	srv := testenv.SeaweedFS(t)
	conformance(t, "s3-seaweedfs", minioConfig(t, srv), map[string]string{
		store.CapConditionalCreate:   store.Yes,
		store.CapConditionalReplace:  store.Yes,
		store.CapConditionalDelete:   store.Yes,
		store.CapPinnedRead:          store.Yes,
		store.CapUserMetadata:        store.Yes,
		store.CapListAfterWrite:      store.Yes,
		storetest.CapConditionalCopy: store.Yes,
	})
}

// TestNoConditionsConformance puts a proxy that strips every conditional header in front of
// MinIO: a store that enforces no condition at all. The probe must say so (single-writer),
// and the suite must observe every condition ignored — such a store is caught, never trusted.
func TestNoConditionsConformance(t *testing.T) {
	proxy, srv := testenv.FaultProxy(t, testenv.MinIO(t))
	proxy.StripConditions(true)
	conformance(t, "s3-minio-no-conditions", minioConfig(t, srv), map[string]string{
		store.CapConditionalCreate:   store.No,
		store.CapConditionalReplace:  store.No,
		store.CapConditionalDelete:   store.No,
		store.CapPinnedRead:          store.No,
		store.CapUserMetadata:        store.Yes,
		store.CapListAfterWrite:      store.Yes,
		storetest.CapConditionalCopy: store.No,
	})
}
