package gcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// proxied opens a fresh bucket through store.Open (so the retry policy applies) behind a
// fault proxy in front of fake-gcs-server, with retry waits skipped, and returns the store,
// the raw Bucket, the proxy and the bucket's name.
func proxied(t *testing.T) (*store.Store, *faultproxy.Proxy, string) {
	t.Helper()
	p := faultproxy.New(t, testenv.FakeGCS(t).Endpoint, faultproxy.Options{})
	policy := store.DefaultRetryPolicy()
	policy.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	cfg := testConfig{Options: Options{Endpoint: p.URL(), Anonymous: true, PartSize: minChunk}, Retry: policy}
	name := uniqueBucket()
	s, err := store.Open(context.Background(), "gs://"+name, cfg.storeConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MakeBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := s.Bucket().(*Bucket)
	t.Cleanup(func() { p.ClearRules(); removeBucket(t, b); s.Close() })
	return s, p, name
}

// count returns how many requests the proxy saw with method, a path containing path and a
// query containing query.
func count(p *faultproxy.Proxy, method, path, query string) int {
	n := 0
	for _, r := range p.Requests() {
		if r.Method == method && strings.Contains(r.Path, path) && strings.Contains(r.RawQuery, query) {
			n++
		}
	}
	return n
}

// TestFaultReadResumedByPolicy: a body cut off mid-stream is resumed by the portable store (store/resume.go) with one
// ranged read pinned to the generation. The SDK's reader would reopen it by itself; the
// Bucket refuses that, so the proxy sees exactly two reads.
func TestFaultReadResumedByPolicy(t *testing.T) {
	s, p, _ := proxied(t)
	ctx := context.Background()
	data := randomBytes(t, 1<<20)
	info, err := s.Put(ctx, "obj", bytes.NewReader(data), &store.PutOptions{Size: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	p.ClearRequests()
	cut := p.Inject(faultproxy.Rule{Method: "GET", Path: "/o/obj", Query: "alt=media", Times: 1, Fault: faultproxy.Truncate, After: 300_000})
	got, gi := readAll(t, s, "obj", nil)
	if !bytes.Equal(got, data) || gi.ETag != info.ETag {
		t.Fatalf("read back %d bytes (ETag %s), want %d (ETag %s)", len(got), gi.ETag, len(data), info.ETag)
	}
	if cut.Fired() != 1 {
		t.Fatalf("the truncation fired %d times", cut.Fired())
	}
	if n := count(p, "GET", "/o/obj", "alt=media"); n != 2 {
		t.Fatalf("%d reads of the object, want 2: the cut one and the policy's resume", n)
	}
	last := p.Requests()[len(p.Requests())-1]
	if !strings.Contains(last.RawQuery, "generation="+info.ETag) || last.Header.Get("Range") != "bytes=300000-" {
		t.Fatalf("the resume was %s ?%s Range %q: want it pinned to generation %s from byte 300000",
			last.Method, last.RawQuery, last.Header.Get("Range"), info.ETag)
	}

	// Every answer cut off: the policy's three transport attempts bound the read. (Were the
	// SDK to reopen on its own, it would go on until the object was read, four requests.)
	p.ClearRequests()
	p.Inject(faultproxy.Rule{Method: "GET", Path: "/o/obj", Query: "alt=media", Fault: faultproxy.Truncate, After: 300_000})
	bounded, cancel := context.WithTimeout(ctx, 20*time.Second) // a reopening SDK loops: fail, not hang
	defer cancel()
	obj, err := s.Get(bounded, "obj", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	_, err = io.ReadAll(obj)
	var e *store.Error
	if !errors.Is(err, store.ErrUnavailable) || !errors.As(err, &e) || e.Attempts != 3 {
		t.Fatalf("read under constant truncation: %v, want ErrUnavailable after 3 attempts", err)
	}
	if n := count(p, "GET", "/o/obj", "alt=media"); n != 3 {
		t.Fatalf("%d reads of the object, want 3", n)
	}
}

// TestFaultThrottledHeadRetried: 503s are retried by the policy, one request per attempt.
func TestFaultThrottledHeadRetried(t *testing.T) {
	s, p, _ := proxied(t)
	ctx := context.Background()
	if _, err := s.Put(ctx, "k", strings.NewReader("x"), &store.PutOptions{Size: 1}); err != nil {
		t.Fatal(err)
	}
	p.ClearRequests()
	p.Inject(faultproxy.Rule{Method: "GET", Path: "/o/k", Times: 2, Fault: faultproxy.Status, Status: 503})
	if _, err := s.Head(ctx, "k"); err != nil {
		t.Fatalf("head after two 503s: %v", err)
	}
	if n := count(p, "GET", "/o/k", ""); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	p.Inject(faultproxy.Rule{Method: "GET", Path: "/o/k", Fault: faultproxy.Status, Status: 503})
	_, err := s.Head(ctx, "k")
	var e *store.Error
	if !errors.Is(err, store.ErrUnavailable) || !errors.As(err, &e) || e.Attempts != 5 || e.Status != 503 {
		t.Fatalf("head under constant 503s: %#v, want ErrUnavailable after 5 attempts with the status", err)
	}
}

// TestFaultLostConditionalPut: a conditional put whose answer is lost is sent once and comes
// back ErrOutcomeUnknown with its put-id, which one Head settles: it landed.
func TestFaultLostConditionalPut(t *testing.T) {
	s, p, _ := proxied(t)
	ctx := context.Background()
	p.Inject(faultproxy.Rule{Method: "POST", Path: "/upload/", Times: 1, Fault: faultproxy.Lost})
	_, err := s.Put(ctx, "lease", strings.NewReader("mine"), &store.PutOptions{Size: 4, IfNoneMatch: true})
	var e *store.Error
	if !errors.Is(err, store.ErrOutcomeUnknown) || !errors.As(err, &e) || e.PutID == "" {
		t.Fatalf("lost conditional put: %v, want ErrOutcomeUnknown with a put-id", err)
	}
	if n := count(p, "POST", "/upload/", ""); n != 1 {
		t.Fatalf("the conditional put was sent %d times, want once", n)
	}
	if _, landed, err := s.ResolvePut(ctx, "lease", e.PutID); err != nil || !landed {
		t.Fatalf("ResolvePut: landed %v, %v; want true", landed, err)
	}
}

// TestFaultResumableChunkFails: a chunk answered 503 is not retried by the SDK; the put
// fails, and the store's retry policy sends the whole (replayable) body again in a new upload.
func TestFaultResumableChunkFails(t *testing.T) {
	s, p, _ := proxied(t)
	ctx := context.Background()
	data := randomBytes(t, 3*minChunk+99)
	fail := p.Inject(faultproxy.Rule{Query: "upload_id=", Skip: 1, Times: 1, Fault: faultproxy.Status, Status: 503})
	if _, err := s.Put(ctx, "big", bytes.NewReader(data), &store.PutOptions{Size: int64(len(data))}); err != nil {
		t.Fatalf("put: %v", err)
	}
	if fail.Fired() != 1 {
		t.Fatalf("the chunk fault fired %d times", fail.Fired())
	}
	if n := count(p, "POST", "/upload/", "uploadType=resumable&alt=json"); n != 0 {
		t.Logf("(query shape differs: %d)", n)
	}
	starts := 0
	for _, r := range p.Requests() {
		if strings.Contains(r.RawQuery, "uploadType=resumable") && !strings.Contains(r.RawQuery, "upload_id=") {
			starts++
		}
	}
	if starts != 2 {
		t.Fatalf("%d resumable uploads started, want 2 (the failed one and the policy's resend)", starts)
	}
	if got, _ := readAll(t, s, "big", nil); !bytes.Equal(got, data) {
		t.Fatalf("content differs after the resend")
	}
}

// TestUploadShapes: which request shape each put takes, as the proxy sees it. A body that fits
// in one chunk (known size, or unknown and read ahead) is one request; a larger one is a
// resumable upload of PartSize chunks, its precondition on the request that starts it.
func TestUploadShapes(t *testing.T) {
	s, p, _ := proxied(t)
	ctx := context.Background()
	big := randomBytes(t, 3*minChunk+5)
	tests := []struct {
		name   string
		body   []byte
		size   int64
		opts   store.PutOptions
		single bool
		chunks int
		cond   string
	}{
		{"small, unknown size", big[:10], -1, store.PutOptions{}, true, 0, ""},
		{"empty, size 0", nil, 0, store.PutOptions{}, true, 0, ""},
		{"one chunk, known size", big[:minChunk], minChunk, store.PutOptions{}, true, 0, ""},
		{"under a chunk, unknown size", big[:minChunk-1], -1, store.PutOptions{IfNoneMatch: true}, true, 0, "ifGenerationMatch=0"},
		// Read ahead to the brim, the body may go on: a resumable upload, ended by an empty chunk.
		{"one chunk exactly, unknown size", big[:minChunk], -1, store.PutOptions{IfNoneMatch: true}, false, 2, "ifGenerationMatch=0"},
		{"four chunks, known size", big, int64(len(big)), store.PutOptions{IfNoneMatch: true}, false, 4, "ifGenerationMatch=0"},
		{"four chunks, unknown size", big, -1, store.PutOptions{}, false, 4, ""},
		{"two chunks of a larger part size", big, -1, store.PutOptions{PartSize: 2 * minChunk}, false, 2, ""},
	}
	for i, tc := range tests {
		p.ClearRequests()
		key := fmt.Sprintf("shape/%d", i)
		o := tc.opts
		o.Size = tc.size
		info, err := s.Put(ctx, key, onlyReader{bytes.NewReader(tc.body)}, &o)
		if err != nil || info.Size != int64(len(tc.body)) {
			t.Fatalf("%s: %+v %v", tc.name, info, err)
		}
		var singles, starts, chunks int
		var startQuery string
		for _, r := range p.Requests() {
			switch {
			case strings.Contains(r.RawQuery, "uploadType=multipart"):
				singles++
				startQuery = r.RawQuery
			case strings.Contains(r.RawQuery, "upload_id="):
				chunks++
			case strings.Contains(r.RawQuery, "uploadType=resumable"):
				starts++
				startQuery = r.RawQuery
			}
		}
		if tc.single && (singles != 1 || starts+chunks != 0) || !tc.single && (singles != 0 || starts != 1 || chunks != tc.chunks) {
			t.Errorf("%s: %d single, %d resumable starts, %d chunks; want single %v or %d chunks", tc.name, singles, starts, chunks, tc.single, tc.chunks)
		}
		if !strings.Contains(startQuery, tc.cond) {
			t.Errorf("%s: the upload began with ?%s, want %s on it", tc.name, startQuery, tc.cond)
		}
		if data, _ := readAll(t, s, key, nil); !bytes.Equal(data, tc.body) {
			t.Errorf("%s: read back %d bytes, want %d", tc.name, len(data), len(tc.body))
		}
	}
}
