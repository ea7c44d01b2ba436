package s3

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
)

// fakeS3 is a minimal S3 on loopback that records every request and answers from hooks.
type fakeS3 struct {
	mu   sync.Mutex
	reqs []recorded
	// hook, when set, may answer a request itself (returning true).
	hook func(w http.ResponseWriter, r *http.Request, kind string, n int) bool
}

type recorded struct {
	kind   string // "put", "create", "part", "complete", "abort", "get", "head", "head-bucket", "list", "delete", "delete-many", "copy"
	header http.Header
	query  string
	size   int
}

func classifyRequest(r *http.Request) string {
	q := r.URL.Query()
	bucketOnly := strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 0
	switch {
	case r.Method == http.MethodPost && q.Has("uploads"):
		return "create"
	case r.Method == http.MethodPut && q.Has("partNumber"):
		return "part"
	case r.Method == http.MethodPost && q.Has("uploadId"):
		return "complete"
	case r.Method == http.MethodDelete && q.Has("uploadId"):
		return "abort"
	case r.Method == http.MethodPost && q.Has("delete"):
		return "delete-many"
	case r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "":
		return "copy"
	case r.Method == http.MethodHead && bucketOnly:
		return "head-bucket"
	case r.Method == http.MethodGet && bucketOnly:
		return "list"
	}
	return strings.ToLower(r.Method)
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	kind := classifyRequest(r)
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{kind: kind, header: r.Header.Clone(), query: r.URL.RawQuery, size: len(body)})
	n := f.countLocked(kind)
	hook := f.hook
	f.mu.Unlock()
	if hook != nil && hook(w, r, kind, n) {
		return
	}
	switch kind {
	case "create":
		fmt.Fprint(w, `<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>up-1</UploadId></InitiateMultipartUploadResult>`)
	case "complete":
		fmt.Fprint(w, `<CompleteMultipartUploadResult><ETag>"final-3"</ETag></CompleteMultipartUploadResult>`)
	case "abort", "delete":
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("ETag", fmt.Sprintf(`"etag-%s-%d"`, kind, n))
	}
}

func (f *fakeS3) countLocked(kind string) int {
	n := 0
	for _, r := range f.reqs {
		if r.kind == kind {
			n++
		}
	}
	return n
}

func (f *fakeS3) requests(kind string) []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []recorded
	for _, r := range f.reqs {
		if r.kind == kind {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeS3) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

func s3Error(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>fake</Message></Error>`, code)
}

// newFake starts a fake S3 on 127.0.0.1 and opens a raw Bucket against it (no retry wrapper).
func newFake(t *testing.T, cfg testConfig) (*fakeS3, *Bucket) {
	t.Helper()
	f := &fakeS3{}
	endpoint := newServer(t, f)
	t.Setenv("WHARF_S3_TEST_AK", "AKIDFAKE")
	t.Setenv("WHARF_S3_TEST_SK", "fake-secret-value")
	cfg.Endpoint = endpoint
	cfg.AccessKeyID, cfg.SecretAccessKey = "env://WHARF_S3_TEST_AK", "env://WHARF_S3_TEST_SK"
	if cfg.Retry == nil {
		p := store.DefaultRetryPolicy()
		p.ResponseTimeouts = []time.Duration{time.Minute} // the machine is shared: no spurious timeouts
		p.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
		cfg.Retry = p
	}
	loc, err := store.ParseURL("s3://bkt")
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Options.Check(loc, cfg.common()); err != nil {
		t.Fatal(err)
	}
	b, err := New(context.Background(), loc, &cfg.Options, cfg.common())
	if err != nil {
		t.Fatal(err)
	}
	return f, b
}

// newServer serves h on 127.0.0.1 until the test ends and returns its URL.
func newServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
