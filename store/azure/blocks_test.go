package azure

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// openProxied opens a fresh container on Azurite behind a fault proxy, as store.Open opens it,
// with 1 MiB blocks, 2 in flight, and p's retry policy (nil: relaxed timeouts).
func openProxied(t *testing.T, p *store.RetryPolicy) (*store.Store, *Container, *faultproxy.Proxy) {
	t.Helper()
	srv := testenv.Azurite(t)
	proxy := faultproxy.New(t, srv.Endpoint, faultproxy.Options{})
	cfg := relaxed(testConfig{Options: Options{Endpoint: proxy.URL(), AccountKey: srv.KeyRef(t), PartSize: MinPartSize, Concurrency: 2}})
	if p != nil {
		cfg.Retry = p
	}
	s := openURL(t, srv.Account, uniqueContainer(), cfg, true)
	c := s.Bucket().(*Container)
	proxy.ClearRequests()
	return s, c, proxy
}

// commits returns the Put Block List requests the proxy saw.
func commits(p *faultproxy.Proxy) []faultproxy.Request {
	var out []faultproxy.Request
	for _, r := range p.Requests() {
		if r.Method == "PUT" && strings.Contains(r.RawQuery, "comp=blocklist") {
			out = append(out, r)
		}
	}
	return out
}

func countQuery(p *faultproxy.Proxy, method, query string) int {
	n := 0
	for _, r := range p.Requests() {
		if r.Method == method && strings.Contains(r.RawQuery, query) {
			n++
		}
	}
	return n
}

// TestLargeConditionalPutKeepsConditionOnCommit is the test for the peer library's bug: a large
// create-if-absent is staged in blocks, and the condition must ride on Put Block List, the
// step that makes the blob visible. Onto an existing blob it fails and leaves the old content;
// the proxy shows If-None-Match: * on the commit itself. The same holds for If-Match.
func TestLargeConditionalPutKeepsConditionOnCommit(t *testing.T) {
	t.Parallel()
	s, _, proxy := openProxied(t, nil)
	ctx := t.Context()
	old, err := s.Put(ctx, "k", strings.NewReader("the old content"), &store.PutOptions{Size: 15})
	if err != nil {
		t.Fatal(err)
	}
	data := randomData(3<<20+17, 5)
	for _, size := range []int64{int64(len(data)), -1} {
		proxy.ClearRequests()
		var body io.Reader = bytes.NewReader(data)
		if size < 0 {
			body = io.MultiReader(body) // not a Seeker
		}
		_, err := s.Put(ctx, "k", body, &store.PutOptions{Size: size, IfNoneMatch: true})
		if !errors.Is(err, store.ErrPreconditionFailed) {
			t.Fatalf("large create-if-absent onto an existing blob (size %d): %v, want ErrPreconditionFailed", size, err)
		}
		var e *store.Error
		if errors.As(err, &e) && (e.Status != 409 || e.Reason != "BlobAlreadyExists") {
			t.Errorf("answer %d %s, want Azurite's 409 BlobAlreadyExists", e.Status, e.Reason)
		}
		got := readAll(t, s, "k")
		info, _ := s.Head(ctx, "k")
		if got != "the old content" || info.ETag != old.ETag {
			t.Errorf("after the failed large create: %q ETag %q, want the old content and ETag %q", got, info.ETag, old.ETag)
		}
		cs := commits(proxy)
		if len(cs) != 1 || cs[0].Header.Get("If-None-Match") != "*" {
			t.Errorf("size %d: %d commits, want one carrying If-None-Match: * (headers %v)", size, len(cs), headersOf(cs))
		}
		if n := countQuery(proxy, "PUT", "blockid="); n < 4 {
			t.Errorf("size %d: %d blocks staged, want the body staged in at least 4", size, n)
		}
	}

	// If-Match: a stale ETag fails at the commit; the current one replaces.
	proxy.ClearRequests()
	_, err = s.Put(ctx, "k", bytes.NewReader(data), &store.PutOptions{Size: int64(len(data)), IfMatch: "0x8DEADBEEF000000"})
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("large put with a stale If-Match: %v, want ErrPreconditionFailed", err)
	}
	if cs := commits(proxy); len(cs) != 1 || cs[0].Header.Get("If-Match") != `"0x8DEADBEEF000000"` {
		t.Errorf("stale If-Match: commits %v, want one carrying the If-Match", headersOf(cs))
	}
	if got := readAll(t, s, "k"); got != "the old content" {
		t.Errorf("after the failed large replace: %q", got)
	}
	info, err := s.Put(ctx, "k", bytes.NewReader(data), &store.PutOptions{Size: int64(len(data)), IfMatch: old.ETag})
	if err != nil {
		t.Fatalf("large put with the current If-Match: %v", err)
	}
	if got := readAll(t, s, "k"); got != string(data) {
		t.Errorf("after the large replace: %d bytes, want %d", len(got), len(data))
	}
	if head, _ := s.Head(ctx, "k"); head.ETag != info.ETag || head.Size != int64(len(data)) || head.Metadata[store.MetaPutID] == "" {
		t.Errorf("after the large replace: head %+v, put returned ETag %q", head, info.ETag)
	}

	// Create-if-absent on an absent key succeeds, with the condition on its commit.
	proxy.ClearRequests()
	if _, err := s.Put(ctx, "fresh", bytes.NewReader(data), &store.PutOptions{Size: -1, IfNoneMatch: true}); err != nil {
		t.Fatalf("large create-if-absent on an absent key: %v", err)
	}
	if cs := commits(proxy); len(cs) != 1 || cs[0].Header.Get("If-None-Match") != "*" {
		t.Errorf("fresh create: commits %v, want one carrying If-None-Match: *", headersOf(cs))
	}
}

func headersOf(rs []faultproxy.Request) []string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("If-None-Match=%q If-Match=%q", r.Header.Get("If-None-Match"), r.Header.Get("If-Match")))
	}
	return out
}

func readAll(t *testing.T, s *store.Store, key string) string {
	t.Helper()
	obj, err := s.Get(t.Context(), key, nil)
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	return string(b)
}

// TestFailedBlockUploadCommitsNothing: a staged upload whose body fails leaves the key as it
// was (absent, or the old content) with no block committed, and never sends the commit.
func TestFailedBlockUploadCommitsNothing(t *testing.T) {
	t.Parallel()
	s, c, proxy := openProxied(t, nil)
	ctx := t.Context()
	boom := errors.New("the producer died")
	if _, err := s.Put(ctx, "existing", strings.NewReader("old"), &store.PutOptions{Size: 3}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"absent", "existing"} {
		for _, size := range []int64{4 << 20, -1} {
			body := io.MultiReader(bytes.NewReader(randomData(2<<20+5, 6)), errReader{boom})
			_, err := s.Put(ctx, key, body, &store.PutOptions{Size: size, IfNoneMatch: key == "absent"})
			if !errors.Is(err, boom) || !errors.Is(err, store.ErrUnavailable) {
				t.Errorf("%s, size %d: %v, want ErrUnavailable wrapping the body's error", key, size, err)
			}
		}
	}
	wantNothingCommitted(t, s, c, "absent")
	if got := readAll(t, s, "existing"); got != "old" {
		t.Errorf("existing key after failed puts: %q, want %q", got, "old")
	}
	if n := len(commits(proxy)); n != 0 {
		t.Errorf("%d commits sent for failed uploads, want none", n)
	}
	// A single Put Blob whose body ends early fails as the body, and writes nothing.
	_, err := s.Put(ctx, "short", io.MultiReader(strings.NewReader("abc")), &store.PutOptions{Size: 10})
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "3 of the 10 bytes") {
		t.Errorf("short body: %v, want it named as the body's fault", err)
	}
	_, err = s.Put(ctx, "broken", io.MultiReader(strings.NewReader("abc"), errReader{boom}), &store.PutOptions{Size: 10})
	if !errors.Is(err, boom) {
		t.Errorf("single put, failing body: %v, want the body's error", err)
	}
	wantNothingCommitted(t, s, c, "short")
	wantNothingCommitted(t, s, c, "broken")
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestPutShapes: a known size that fits one block goes in one Put Blob (streamed), a larger one
// in blocks; an unknown size shorter than one block is buffered into one Put Blob.
func TestPutShapes(t *testing.T) {
	t.Parallel()
	s, _, proxy := openProxied(t, nil)
	cases := []struct {
		name          string
		size          int64
		n             int
		blocks, blobs int
	}{
		{"known, one block", MinPartSize, MinPartSize, 0, 1},
		{"known, two blocks", MinPartSize + 1, MinPartSize + 1, 2, 0},
		{"unknown, less than a block", -1, MinPartSize - 1, 0, 1},
		{"unknown, exactly a block", -1, MinPartSize, 1, 0}, // the end is seen only after the block is full
		{"unknown, empty", -1, 0, 0, 1},
		{"unknown, three blocks", -1, 2*MinPartSize + 1, 3, 0},
	}
	for _, tc := range cases {
		proxy.ClearRequests()
		data := randomData(tc.n, 7)
		info, err := s.Put(t.Context(), "shape", io.MultiReader(bytes.NewReader(data)), &store.PutOptions{Size: tc.size})
		if err != nil || info.Size != int64(tc.n) {
			t.Fatalf("%s: %v (size %d)", tc.name, err, info.Size)
		}
		blocks := countQuery(proxy, "PUT", "blockid=")
		blobs := 0
		for _, r := range proxy.Requests() {
			if r.Method == "PUT" && r.RawQuery == "" {
				blobs++
			}
		}
		if blocks != tc.blocks || blobs != tc.blobs {
			t.Errorf("%s: %d blocks and %d Put Blob, want %d and %d", tc.name, blocks, blobs, tc.blocks, tc.blobs)
		}
		if got := readAll(t, s, "shape"); got != string(data) {
			t.Errorf("%s: read back %d bytes, want %d", tc.name, len(got), len(data))
		}
	}
}

// TestDeleteManyBatches deletes more keys than one batch holds, odd ones and missing ones
// among them, in blob batch requests.
func TestDeleteManyBatches(t *testing.T) {
	t.Parallel()
	s, _, proxy := openProxied(t, nil)
	var keys []string
	for i := range 300 {
		keys = append(keys, fmt.Sprintf("batch/%03d", i))
	}
	keys = append(keys, "odd/with space", "odd/ünï+%20#?", "batch/never-was")
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, k := range append(keys[:len(keys)-1:len(keys)-1], "keep") {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if _, err := s.Put(t.Context(), k, strings.NewReader("x"), &store.PutOptions{Size: 1}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	proxy.ClearRequests()
	if err := s.DeleteMany(t.Context(), keys); err != nil {
		t.Fatalf("DeleteMany: %v", err)
	}
	if n := countQuery(proxy, "POST", "comp=batch"); n != 2 {
		t.Errorf("%d batch requests for %d keys, want 2", n, len(keys))
	}
	left, err := s.ListAll(t.Context(), "")
	if err != nil || len(left) != 1 || left[0].Key != "keep" {
		t.Errorf("after DeleteMany: %v %v, want only keep", left, err)
	}
}

// TestCopyShapes: a copy with new metadata replaces the source's; a copy with a content type
// streams (Copy Blob cannot set one); a conditional copy with a stale If-Match fails.
func TestCopyShapes(t *testing.T) {
	t.Parallel()
	s, _, _ := openProxied(t, nil)
	ctx := t.Context()
	src, err := s.Put(ctx, "src", strings.NewReader("body"), &store.PutOptions{Size: 4, ContentType: "text/plain", Metadata: map[string]string{"a": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Copy(ctx, "src", "md", &store.PutOptions{Metadata: map[string]string{"b-c": "2"}})
	if err != nil || info.Size != 4 || info.Metadata["b-c"] != "2" || info.Metadata["a"] != "" || info.ContentType != "text/plain" {
		t.Errorf("copy with metadata: %+v %v", info, err)
	}
	info, err = s.Copy(ctx, "src", "typed", &store.PutOptions{ContentType: "application/json"})
	if err != nil || info.ContentType != "application/json" || info.Metadata["a"] != "1" {
		t.Errorf("copy with a content type: %+v %v", info, err)
	}
	if got := readAll(t, s, "typed"); got != "body" {
		t.Errorf("streamed copy: %q", got)
	}
	_, err = s.Copy(ctx, "src", "md", &store.PutOptions{IfMatch: src.ETag})
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Errorf("copy with a stale If-Match: %v, want ErrPreconditionFailed", err)
	}
	_, err = s.Copy(ctx, "absent", "x", &store.PutOptions{ContentType: "text/plain"})
	if !errors.Is(err, store.ErrNotExist) {
		t.Errorf("streamed copy of a missing source: %v, want ErrNotExist", err)
	}
}

// TestRangesAtTheEnd: a range starting at the end of an object, or any range of an empty one
// (Azure answers 416), reads as empty, as on S3; a stale pin still fails.
func TestRangesAtTheEnd(t *testing.T) {
	t.Parallel()
	s, _, _ := openProxied(t, nil)
	ctx := t.Context()
	if _, err := s.Put(ctx, "empty", strings.NewReader(""), &store.PutOptions{Size: -1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "two", strings.NewReader("ab"), &store.PutOptions{Size: 2}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key            string
		offset, length int64
		want           string
		size           int64
	}{
		{"empty", 0, 10, "", 0},
		{"two", 2, 0, "", 2},
		{"two", 2, 5, "", 2},
		{"two", 1, 10, "b", 2},
	} {
		obj, err := s.Get(ctx, tc.key, &store.GetOptions{Offset: tc.offset, Length: tc.length})
		if err != nil {
			t.Errorf("%s %d+%d: %v", tc.key, tc.offset, tc.length, err)
			continue
		}
		b, _ := io.ReadAll(obj)
		obj.Close()
		if string(b) != tc.want || obj.Info.Size != tc.size {
			t.Errorf("%s %d+%d: %q size %d, want %q size %d", tc.key, tc.offset, tc.length, b, obj.Info.Size, tc.want, tc.size)
		}
	}
	if _, err := s.Get(ctx, "two", &store.GetOptions{Offset: 1, IfMatch: "0x8DEADBEEF000000"}); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Errorf("a stale pinned range: %v, want ErrPreconditionFailed", err)
	}
	if _, err := s.Get(ctx, "empty", &store.GetOptions{Offset: 0, Length: 1, IfMatch: "0x8DEADBEEF000000"}); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Errorf("a stale pinned range of an empty object: %v, want ErrPreconditionFailed", err)
	}
}
