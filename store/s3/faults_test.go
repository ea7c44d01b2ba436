package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// faultStore opens a fresh MinIO bucket through a fault-injecting proxy with the default
// retry policy, except that throttling waits are short and response timeouts are scaled down
// so the test stays fast; the attempt counts are the policy's own.
func faultStore(t *testing.T) (*store.Store, *faultproxy.Proxy) {
	t.Helper()
	proxy, srv := testenv.FaultProxy(t, testenv.MinIO(t))
	p := store.DefaultRetryPolicy()
	p.ThrottleBase, p.ThrottleMax = 5*time.Millisecond, 20*time.Millisecond
	p.ResponseTimeouts = []time.Duration{300 * time.Millisecond, 600 * time.Millisecond, 5 * time.Second}
	cfg := minioConfig(t, srv)
	cfg.Retry = p
	name := uniqueBucket(t)
	s, err := store.Open(context.Background(), "s3://"+name, cfg.storeConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MakeBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := s.Bucket().(*Bucket)
	t.Cleanup(func() { proxy.ClearRules(); removeBucket(t, b) })
	return s, proxy
}

func putString(t *testing.T, s *store.Store, key, v string) store.ObjectInfo {
	t.Helper()
	info, err := s.Put(context.Background(), key, strings.NewReader(v), &store.PutOptions{Size: int64(len(v))})
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return info
}

func TestFaultProxyRetries(t *testing.T) {
	ctx := context.Background()
	s, proxy := faultStore(t)
	putString(t, s, "k", "hello, retries")
	count := func(method string) int { return proxy.Count(method, "/k") }

	cases := []struct {
		name     string
		rule     faultproxy.Rule
		op       func() error
		method   string
		requests int
		kind     error // nil: success
	}{
		{"reset twice then get succeeds", faultproxy.Rule{Method: "GET", Path: "/k", Fault: faultproxy.Reset, Times: 2},
			func() error { return getString(s, "k", "hello, retries") }, "GET", 3, nil},
		{"reset three times: unavailable", faultproxy.Rule{Method: "HEAD", Path: "/k", Fault: faultproxy.Reset, Times: 3},
			func() error { _, err := s.Head(ctx, "k"); return err }, "HEAD", 3, store.ErrUnavailable},
		{"503 four times then head succeeds", faultproxy.Rule{Method: "HEAD", Path: "/k", Fault: faultproxy.Status, Status: 503, Times: 4},
			func() error { _, err := s.Head(ctx, "k"); return err }, "HEAD", 5, nil},
		{"429 five times: unavailable", faultproxy.Rule{Method: "HEAD", Path: "/k", Fault: faultproxy.Status, Status: 429, Times: 5},
			func() error { _, err := s.Head(ctx, "k"); return err }, "HEAD", 5, store.ErrUnavailable},
		{"500 on an unconditional put is retried", faultproxy.Rule{Method: "PUT", Path: "/k", Fault: faultproxy.Status, Status: 500, Times: 2},
			func() error { putString(t, s, "k", "hello, retries"); return nil }, "PUT", 3, nil},
		{"500 on a conditional put: outcome unknown at once", faultproxy.Rule{Method: "PUT", Path: "/k", Fault: faultproxy.Status, Status: 500, Times: 1},
			func() error {
				_, err := s.Put(ctx, "k", strings.NewReader("x"), &store.PutOptions{IfNoneMatch: true, Size: 1})
				return err
			}, "PUT", 1, store.ErrOutcomeUnknown},
		{"reset on a conditional put: outcome unknown at once", faultproxy.Rule{Method: "PUT", Path: "/k", Fault: faultproxy.Reset, Times: 1},
			func() error {
				_, err := s.Put(ctx, "k", strings.NewReader("x"), &store.PutOptions{IfNoneMatch: true, Size: 1})
				return err
			}, "PUT", 1, store.ErrOutcomeUnknown},
		{"stalled response: the next attempt wins", faultproxy.Rule{Method: "GET", Path: "/k", Fault: faultproxy.Stall, Delay: 2 * time.Second, Times: 1},
			func() error { return getString(s, "k", "hello, retries") }, "GET", 2, nil},
		{"stalled body resumes pinned", faultproxy.Rule{Method: "GET", Path: "/k", Fault: faultproxy.StallBody, After: 5, Delay: 2 * time.Second, Times: 1},
			func() error { return getString(s, "k", "hello, retries") }, "GET", 2, nil},
		{"truncated body resumes pinned", faultproxy.Rule{Method: "GET", Path: "/k", Fault: faultproxy.Truncate, After: 7, Times: 1},
			func() error { return getString(s, "k", "hello, retries") }, "GET", 2, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			proxy.ClearRequests()
			in := proxy.Inject(c.rule)
			defer in.Remove()
			err := c.op()
			if c.kind == nil && err != nil {
				t.Fatalf("err = %v, want success", err)
			}
			if c.kind != nil && !errors.Is(err, c.kind) {
				t.Fatalf("err = %v, want %v", err, c.kind)
			}
			if got := count(c.method); got != c.requests {
				t.Errorf("%d %s requests reached the proxy, want %d", got, c.method, c.requests)
			}
			if c.rule.Fault == faultproxy.StallBody || c.rule.Fault == faultproxy.Truncate {
				checkResumed(t, proxy, c.rule.After)
			}
			if c.kind != nil && !strings.Contains(err.Error(), `"k"`) {
				t.Errorf("error %q does not name the key", err)
			}
		})
	}
}

// checkResumed asserts that the last GET resumed at byte after, pinned to the ETag.
func checkResumed(t *testing.T, proxy *faultproxy.Proxy, after int64) {
	t.Helper()
	var last faultproxy.Request
	for _, r := range proxy.Requests() {
		if r.Method == "GET" {
			last = r
		}
	}
	if got, want := last.Header.Get("Range"), "bytes="+strconv.FormatInt(after, 10)+"-"; !strings.HasPrefix(got, want) {
		t.Errorf("resume Range %q, want %q…", got, want)
	}
	if last.Header.Get("If-Match") == "" {
		t.Error("resume was not pinned with If-Match")
	}
}

func getString(s *store.Store, key, want string) error {
	obj, err := s.Get(context.Background(), key, nil)
	if err != nil {
		return err
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		return err
	}
	if string(b) != want {
		return errors.New("read " + string(b) + ", want " + want)
	}
	return nil
}

// TestFaultProxyLostAnswerResolvedByPutID: the put lands but its answer is lost; the caller
// settles the outcome by one HEAD comparing wharf-put-id.
func TestFaultProxyLostAnswerResolvedByPutID(t *testing.T) {
	ctx := context.Background()
	s, proxy := faultStore(t)
	proxy.Inject(faultproxy.Rule{Method: "PUT", Path: "/lost", Fault: faultproxy.Lost, Times: 1})
	_, err := s.Put(ctx, "lost", strings.NewReader("mine"), &store.PutOptions{IfNoneMatch: true, Size: 4})
	var e *store.Error
	if !errors.Is(err, store.ErrOutcomeUnknown) || !errors.As(err, &e) || e.PutID == "" {
		t.Fatalf("err = %v, want outcome unknown carrying the put-id", err)
	}
	info, landed, err := s.ResolvePut(ctx, "lost", e.PutID)
	if err != nil || !landed || info.Size != 4 {
		t.Fatalf("ResolvePut = %+v, %v, %v; want landed", info, landed, err)
	}
	// A later conditional create by someone else fails, and does not look like ours.
	_, err = s.Put(ctx, "lost", strings.NewReader("theirs"), &store.PutOptions{IfNoneMatch: true, Size: 6})
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("second create: %v", err)
	}
	if _, landed, _ := s.ResolvePut(ctx, "lost", "someone-elses-put-id"); landed {
		t.Fatal("a foreign put-id resolved as landed")
	}
}

// TestFaultProxyMultipartPartRetriedAlone: a reset on one UploadPart retries that part alone,
// not the whole object.
func TestFaultProxyMultipartPartRetriedAlone(t *testing.T) {
	ctx := context.Background()
	s, proxy := faultStore(t)
	proxy.Inject(faultproxy.Rule{Method: "PUT", Query: "partNumber=2&", Fault: faultproxy.Reset, Times: 1})
	proxy.Inject(faultproxy.Rule{Method: "PUT", Query: "partNumber=3&", Fault: faultproxy.Status, Status: 503, Times: 2})
	body := bytes.Repeat([]byte("wharf multipart "), (4*MinPartSize+1000)/16)
	info, err := s.Put(ctx, "big", bytes.NewReader(body), &store.PutOptions{Size: int64(len(body)), PartSize: MinPartSize})
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != int64(len(body)) {
		t.Fatalf("size %d, want %d", info.Size, len(body))
	}
	if n := proxy.Count("POST", "/big"); n != 2 { // create + complete
		t.Errorf("%d POSTs (create/complete), want 2: the whole object was resent", n)
	}
	parts := map[string]int{}
	for _, r := range proxy.Requests() {
		if r.Method == "PUT" {
			for _, kv := range strings.Split(r.RawQuery, "&") {
				if strings.HasPrefix(kv, "partNumber=") {
					parts[kv]++
				}
			}
		}
	}
	if parts["partNumber=1"] != 1 || parts["partNumber=2"] != 2 || parts["partNumber=3"] != 3 || parts["partNumber=4"] != 1 || parts["partNumber=5"] != 1 {
		t.Errorf("part requests %v, want 1,2,3,1,1", parts)
	}
	if err := getBytes(s, "big", body); err != nil {
		t.Fatal(err)
	}
}

// TestFaultProxyLostCommitAnswer: the answer to CompleteMultipartUpload is lost after the
// server applied it. The put settles it by its put-id and succeeds, conditional or not, never
// ending in an outcome nobody can resolve (before, an unconditional put ended in
// outcome-unknown with no put-id). A commit whose answer is lost before the server applied it
// is sent again when the put is unconditional, and left to the caller as outcome-unknown,
// with the put-id, when it is conditional. Nothing is left open.
func TestFaultProxyLostCommitAnswer(t *testing.T) {
	ctx := context.Background()
	s, proxy := faultStore(t)
	body := bytes.Repeat([]byte("lost commit answer "), (singlePutMax+MinPartSize+333)/19) // over the single-put limit
	opts := func(conditional bool) *store.PutOptions {
		return &store.PutOptions{Size: int64(len(body)), PartSize: MinPartSize, IfNoneMatch: conditional}
	}

	proxy.Inject(faultproxy.Rule{Method: "POST", Path: "/plain", Query: "uploadId=", Fault: faultproxy.Lost, Times: 1})
	info, err := s.Put(ctx, "plain", bytes.NewReader(body), opts(false))
	if err != nil {
		t.Fatalf("unconditional put whose commit answer was lost: %v, want it settled by its put-id", err)
	}
	if info.Size != int64(len(body)) || info.Metadata[store.MetaPutID] == "" {
		t.Errorf("settled put: %+v", info)
	}
	if err := getBytes(s, "plain", body); err != nil {
		t.Fatal(err)
	}

	proxy.Inject(faultproxy.Rule{Method: "POST", Path: "/cond", Query: "uploadId=", Fault: faultproxy.Lost, Times: 1})
	if _, err := s.Put(ctx, "cond", bytes.NewReader(body), opts(true)); err != nil {
		t.Fatalf("conditional put whose commit answer was lost after it landed: %v", err)
	}

	// Lost before it applied (a reset): sent again when unconditional…
	proxy.Inject(faultproxy.Rule{Method: "POST", Path: "/reset", Query: "uploadId=", Fault: faultproxy.Reset, Times: 1})
	if _, err := s.Put(ctx, "reset", bytes.NewReader(body), opts(false)); err != nil {
		t.Fatalf("unconditional put whose commit was reset: %v", err)
	}
	if err := getBytes(s, "reset", body); err != nil {
		t.Fatal(err)
	}
	// …and left to the caller when conditional: never resent blindly.
	proxy.Inject(faultproxy.Rule{Method: "POST", Path: "/reset-cond", Query: "uploadId=", Fault: faultproxy.Reset, Times: 1})
	_, err = s.Put(ctx, "reset-cond", bytes.NewReader(body), opts(true))
	var e *store.Error
	if !errors.Is(err, store.ErrOutcomeUnknown) || !errors.As(err, &e) || e.PutID == "" {
		t.Fatalf("conditional put whose commit was reset: %v, want outcome unknown with the put-id", err)
	}
	if _, landed, err := s.ResolvePut(ctx, "reset-cond", e.PutID); err != nil || landed {
		t.Errorf("ResolvePut of a commit that never applied: landed %v, %v", landed, err)
	}
	if n := openUploads(t, s.Bucket().(*Bucket)); n != 0 {
		t.Errorf("%d uploads left open", n)
	}
}

func getBytes(s *store.Store, key string, want []byte) error {
	obj, err := s.Get(context.Background(), key, nil)
	if err != nil {
		return err
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		return err
	}
	if !bytes.Equal(b, want) {
		return errors.New("content differs")
	}
	return nil
}

// TestUnreachableEndpoint: nothing listens; the request fails as unavailable within the
// transport attempts, naming the request.
func TestUnreachableEndpoint(t *testing.T) {
	port := testenv.FreeLoopbackPort(t)
	cfg := testConfig{Options: Options{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), Region: "us-east-1", Anonymous: true}}
	s, err := store.Open(context.Background(), "s3://nobody-home/x", cfg.storeConfig())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Head(context.Background(), "obj")
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("err = %v, want unavailable", err)
	}
	var e *store.Error
	if !errors.As(err, &e) || e.Attempts != 3 || !strings.Contains(err.Error(), "x/obj") {
		t.Errorf("err = %v (attempts %d), want 3 attempts naming x/obj", err, e.Attempts)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}
