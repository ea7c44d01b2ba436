package gcs

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

// TestFakeGCSConformance runs the store conformance suite against fake-gcs-server, each case on
// a fresh bucket opened the way store.Open opens it. Want is what fake-gcs-server 1.56 really
// does with each condition, as the probe finds it: it enforces the generation preconditions of
// uploads (create and replace, single-request and resumable), serves a pinned read's
// superseded generation as absent (the read asks for the generation, which fake-gcs-server
// honours, beside the precondition, which it ignores), and ignores the precondition of a
// delete (a stale generation deletes) and of a rewrite (which is why the store streams a
// conditional copy).
func TestFakeGCSConformance(t *testing.T) {
	srv := testenv.FakeGCS(t)
	cfg := emulatorConfig(srv)
	// The suite checks semantics, not latency: its cases run in parallel against one server,
	// so each attempt gets more time than the default 2 s / 4 s / 10 s.
	p := store.DefaultRetryPolicy()
	p.ResponseTimeouts = []time.Duration{20 * time.Second, 30 * time.Second, 60 * time.Second}
	cfg.Retry = p
	open := func(t *testing.T, bucket string, make bool) *store.Store {
		s, err := store.Open(context.Background(), "gs://"+bucket, cfg.storeConfig())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() }) // after the bucket's removal below
		if make {
			if err := s.MakeBucket(context.Background()); err != nil {
				t.Fatal(err)
			}
			b := s.Bucket().(*Bucket)
			t.Cleanup(func() { removeBucket(t, b) })
		}
		return s
	}
	storetest.Run(t, storetest.Harness{
		Name:        "gcs-fake-gcs-server",
		Open:        func(t *testing.T) *store.Store { return open(t, uniqueBucket(), true) },
		OpenMissing: func(t *testing.T) *store.Store { return open(t, uniqueBucket()+"-missing", false) },
		// OpenUploads stays nil: a resumable upload that is never completed leaves no object
		// and nothing to list (TestFakeGCSResumable* check the key instead).
		Want: map[string]string{
			probe.CapConditionalCreate:  probe.Yes, // 412 on ifGenerationMatch=0
			probe.CapConditionalReplace: probe.Yes, // 412 on a stale ifGenerationMatch
			probe.CapConditionalDelete:  probe.No,  // fake-gcs-server deletes anyway
			probe.CapPinnedRead:         probe.Yes, // a superseded generation is not found
			probe.CapUserMetadata:       probe.Yes,
			probe.CapListAfterWrite:     probe.Yes,
		},
		Large:               true,
		Checksums:           true,
		TrailingSlashQuirks: map[string]string{"all": "fake-gcs-server takes the put of a name ending in '/' and then neither lists nor serves it (GCS itself keeps such objects)"},
		PartSize:            minChunk * 4,        // 1 MiB chunks
		LargeSize:           4*minChunk*4 + 1234, // five chunks
	})
}

// The capabilities the portable store learns from this backend when it opens one.
var (
	_ driver.Bucket      = (*Bucket)(nil)
	_ driver.Copier      = (*Bucket)(nil)
	_ driver.BucketMaker = (*Bucket)(nil)
)
