package s3

import (
	"context"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/probe"
	"github.com/wharfdata/wharf/store/storetest"
)

// conformance runs the store conformance suite against the S3 server cfg points at, each case
// on a fresh bucket opened the way store.Open opens it. want is what the server is known to
// do with each condition; the suite holds the probe and its own observations to it.
func conformance(t *testing.T, name string, cfg testConfig, want map[string]string, quirks ...func(*storetest.Harness)) {
	// The suite checks semantics, not latency: every case runs in parallel against one
	// server, so give each attempt more time than the default 2 s / 4 s / 10 s (the timeouts
	// themselves are tested through the fault proxy).
	p := store.DefaultRetryPolicy()
	p.ResponseTimeouts = []time.Duration{20 * time.Second, 30 * time.Second, 60 * time.Second}
	cfg.Retry = p
	open := func(t *testing.T, bucket string, make bool) *store.Store {
		s, err := store.Open(context.Background(), "s3://"+bucket, cfg.storeConfig())
		if err != nil {
			t.Fatal(err)
		}
		if make {
			if err := s.MakeBucket(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { removeBucket(t, s.Bucket().(*Bucket)) })
		}
		return s
	}
	h := storetest.Harness{
		Name:        name,
		Open:        func(t *testing.T) *store.Store { return open(t, uniqueBucket(t), true) },
		OpenMissing: func(t *testing.T) *store.Store { return open(t, uniqueBucket(t)+"-missing", false) },
		OpenUploads: func(t *testing.T, s *store.Store) int {
			b, ok := s.Bucket().(*Bucket)
			if !ok {
				t.Fatal("not an s3 store")
			}
			return openUploads(t, b)
		},
		Want:      want,
		Large:     true,
		Checksums: true,
		PartSize:  MinPartSize,
	}
	for _, q := range quirks {
		q(&h)
	}
	storetest.Run(t, h)
}

// TestMinIOConformance: MinIO enforces conditional create, replace and pinned reads, but
// deletes on a DELETE with a stale If-Match and overwrites on a conditional CopyObject (which
// is why the store streams a conditional copy).
func TestMinIOConformance(t *testing.T) {
	srv := testenv.MinIO(t)
	conformance(t, "s3-minio", minioConfig(t, srv), map[string]string{
		probe.CapConditionalCreate:  probe.Yes,
		probe.CapConditionalReplace: probe.Yes,
		probe.CapConditionalDelete:  probe.No, // MinIO deletes anyway
		probe.CapPinnedRead:         probe.Yes,
		probe.CapUserMetadata:       probe.Yes,
		probe.CapListAfterWrite:     probe.Yes,
	})
}

// TestSeaweedFSConformance: a second, independent implementation of the S3 API.
func TestSeaweedFSConformance(t *testing.T) {
	srv := testenv.SeaweedFS(t)
	conformance(t, "s3-seaweedfs", minioConfig(t, srv), map[string]string{
		probe.CapConditionalCreate:  probe.Yes,
		probe.CapConditionalReplace: probe.Yes,
		probe.CapConditionalDelete:  probe.Yes,
		probe.CapPinnedRead:         probe.Yes,
		probe.CapUserMetadata:       probe.Yes,
		probe.CapListAfterWrite:     probe.Yes,
	}, func(h *storetest.Harness) {
		h.EmptyPrefixesLinger = true // its filer keeps emptied directories
		h.TrailingSlashQuirks = map[string]string{"copy": "CopyObject from a key ending in '/' answers 404 NoSuchKey (its filer keeps such a key as a directory)"}
	})
}

// TestNoConditionsConformance puts a proxy that strips every conditional header in front of
// MinIO: a store that enforces no condition at all. The probe must say so (single-writer),
// and the suite must observe every condition ignored — such a store is caught, never trusted.
func TestNoConditionsConformance(t *testing.T) {
	proxy, srv := testenv.FaultProxy(t, testenv.MinIO(t))
	proxy.StripConditions(true)
	conformance(t, "s3-minio-no-conditions", minioConfig(t, srv), map[string]string{
		probe.CapConditionalCreate:  probe.No,
		probe.CapConditionalReplace: probe.No,
		probe.CapConditionalDelete:  probe.No,
		probe.CapPinnedRead:         probe.No,
		probe.CapUserMetadata:       probe.Yes,
		probe.CapListAfterWrite:     probe.Yes,
	})
}

// The capabilities the portable store learns from this backend when it opens one.
var (
	_ driver.Bucket       = (*Bucket)(nil)
	_ driver.Copier       = (*Bucket)(nil)
	_ driver.BucketMaker  = (*Bucket)(nil)
	_ driver.BatchDeleter = (*Bucket)(nil)
)
