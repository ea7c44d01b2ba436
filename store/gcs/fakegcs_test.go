package gcs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"strings"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/probe"
)

func TestFakeGCSRoundTrip(t *testing.T) {
	b := openFake(t, testConfig{})
	ctx := context.Background()
	if err := b.MakeBucket(ctx); err != nil {
		t.Fatalf("second MakeBucket of an existing bucket: %v", err)
	}
	md := map[string]string{"wharf-sha256": "abc", "wharf-node": "n1"}
	info, err := b.Put(ctx, "dir/a.txt", strings.NewReader("hello world"),
		&store.PutOptions{Size: 11, ContentType: "text/plain", Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	if info.ETag == "" || info.ETag == "0" || info.Size != 11 {
		t.Fatalf("put info %+v", info)
	}
	if _, err := parseGeneration(call{}, info.ETag); err != nil {
		t.Fatalf("the ETag %q is not a generation: %v", info.ETag, err)
	}
	data, got := readAll(t, b, "dir/a.txt", nil)
	if string(data) != "hello world" || got.ETag != info.ETag || got.ContentType != "text/plain" ||
		got.Metadata["wharf-sha256"] != "abc" || got.Metadata["wharf-node"] != "n1" || got.LastModified.IsZero() {
		t.Fatalf("get %q %+v", data, got)
	}
	data, got = readAll(t, b, "dir/a.txt", &store.GetOptions{Offset: 6, Length: 3, IfMatch: info.ETag})
	if string(data) != "wor" || got.Size != 11 || got.ETag != info.ETag {
		t.Fatalf("pinned range get %q %+v", data, got)
	}
	data, got = readAll(t, b, "dir/a.txt", &store.GetOptions{Offset: 11})
	if len(data) != 0 || got.Size != 11 {
		t.Fatalf("read from the end: %q %+v", data, got)
	}
	head, err := b.Head(ctx, "dir/a.txt")
	if err != nil || head.Size != 11 || head.ETag != info.ETag || head.Metadata["wharf-node"] != "n1" ||
		!head.LastModified.Equal(got.LastModified) {
		t.Fatalf("head %+v %v (get said %v)", head, err, got.LastModified)
	}
	if _, err := b.Head(ctx, "dir/missing"); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("head missing: %v", err)
	}
	// An ETag that is not a generation matches nothing, without a request.
	_, err = b.Put(ctx, "dir/a.txt", strings.NewReader("x"), &store.PutOptions{Size: 1, IfMatch: "d41d8cd98f00b204e9800998ecf8427e"})
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("put with an S3-style ETag: %v", err)
	}
	cp, err := b.Copy(ctx, "dir/a.txt", "dir/sub/b.txt", &driver.PutOptions{})
	if err != nil || cp.Size != 11 || cp.Metadata["wharf-sha256"] != "abc" || cp.ETag == "" {
		t.Fatalf("copy %+v %v", cp, err)
	}
	cp, err = b.Copy(ctx, "dir/a.txt", "dir/c.txt", &store.PutOptions{ContentType: "application/x-ndjson", Metadata: map[string]string{"k": "v"}})
	if err != nil || cp.ContentType != "application/x-ndjson" || len(cp.Metadata) != 1 || cp.Metadata["k"] != "v" {
		t.Fatalf("copy replacing metadata %+v %v", cp, err)
	}
	if err := b.Delete(ctx, "dir/c.txt", &store.DeleteOptions{IfMatch: cp.ETag}); err != nil {
		t.Fatalf("delete with the current generation: %v", err)
	}
	if err := b.Delete(ctx, "dir/c.txt", &driver.DeleteOptions{}); err != nil {
		t.Fatalf("deleting a missing key: %v", err)
	}
}

// TestFakeGCSMetadataCase: fake-gcs-server keeps the case of metadata keys another client
// wrote; the backend hands them back lowercase, as the contract has them.
func TestFakeGCSMetadataCase(t *testing.T) {
	b := openFake(t, testConfig{})
	ctx := context.Background()
	w := b.bucket.Object("mixed").NewWriter(ctx)
	w.Metadata = map[string]string{"Wharf-Node": "n7"}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if attrs, err := b.bucket.Object("mixed").Attrs(ctx); err != nil || attrs.Metadata["Wharf-Node"] != "n7" {
		t.Fatalf("the emulator did not keep the case: %v %v", attrs.Metadata, err)
	}
	head, err := b.Head(ctx, "mixed")
	if err != nil || head.Metadata["wharf-node"] != "n7" || len(head.Metadata) != 1 {
		t.Fatalf("head metadata %v %v", head.Metadata, err)
	}
	if _, got := readAll(t, b, "mixed", nil); got.Metadata["wharf-node"] != "n7" || len(got.Metadata) != 1 {
		t.Fatalf("get metadata %v", got.Metadata)
	}
}

// TestFakeGCSPreconditionsOnReads pins down what fake-gcs-server does with a read's
// preconditions, which is why the backend pins reads by generation: it ignores
// ifGenerationMatch (the read succeeds), but answers a superseded generation as absent.
func TestFakeGCSPreconditionsOnReads(t *testing.T) {
	b := openFake(t, testConfig{})
	ctx := context.Background()
	old, err := b.Put(ctx, "p", strings.NewReader("old"), &store.PutOptions{Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "p", strings.NewReader("new"), &store.PutOptions{Size: 3}); err != nil {
		t.Fatal(err)
	}
	gen, _ := parseGeneration(call{}, old.ETag)
	r, err := b.bucket.Object("p").If(storage.Conditions{GenerationMatch: gen}).NewReader(ctx)
	if err != nil {
		t.Fatalf("fake-gcs-server now refuses a read with a stale ifGenerationMatch (%v): update the docs and the probe's expectations", err)
	}
	r.Close()
	if _, err := b.bucket.Object("p").Generation(gen).NewReader(ctx); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Fatalf("read of a superseded generation: %v, want not found", err)
	}
	_, err = b.Get(ctx, "p", &store.GetOptions{IfMatch: old.ETag})
	if !errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrNotExist) {
		t.Fatalf("get pinned to a superseded generation: %v, want ErrPreconditionFailed only", err)
	}
	if err := b.Delete(ctx, "p", &driver.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = b.Get(ctx, "p", &store.GetOptions{IfMatch: old.ETag})
	if !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("pinned get of a deleted key: %v, want ErrNotExist", err)
	}
}

// largeConfig makes resumable uploads of 256 KiB chunks: the bodies below span many.
func largeConfig() testConfig { return testConfig{Options: Options{PartSize: minChunk}} }

const largeSize = 8*minChunk + 4321 // nine chunks

// TestFakeGCSResumableRoundTrip puts bodies of several chunks, of known and unknown size.
func TestFakeGCSResumableRoundTrip(t *testing.T) {
	b := openFake(t, largeConfig())
	body := randomBytes(t, largeSize)
	want := sha256.Sum256(body)
	for name, r := range map[string]io.Reader{"known": bytes.NewReader(body), "unknown": onlyReader{bytes.NewReader(body)}} {
		size := int64(len(body))
		if name == "unknown" {
			size = -1
		}
		info, err := b.Put(context.Background(), "big/"+name, r, &store.PutOptions{Size: size, Metadata: map[string]string{"wharf-range": "1-2"}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		data, got := readAll(t, b, "big/"+name, nil)
		if sha256.Sum256(data) != want || info.Size != int64(len(body)) || got.ETag != info.ETag || got.Metadata["wharf-range"] != "1-2" {
			t.Fatalf("%s: %d bytes read back, put info %+v, get info %+v", name, len(data), info, got)
		}
	}
}

// TestFakeGCSResumableCreateOnExisting: a create-if-absent of several chunks onto an existing
// key fails with ErrPreconditionFailed (the condition rides on the resumable upload) and the
// existing object is untouched, content and generation.
func TestFakeGCSResumableCreateOnExisting(t *testing.T) {
	b := openFake(t, largeConfig())
	ctx := context.Background()
	first, err := b.Put(ctx, "k", strings.NewReader("first"), &store.PutOptions{Size: 5})
	if err != nil {
		t.Fatal(err)
	}
	body := randomBytes(t, largeSize)
	for _, size := range []int64{int64(len(body)), -1} {
		_, err = b.Put(ctx, "k", onlyReader{bytes.NewReader(body)}, &store.PutOptions{Size: size, IfNoneMatch: true})
		if !errors.Is(err, store.ErrPreconditionFailed) {
			t.Fatalf("resumable create-if-absent (size %d) onto an existing key: %v", size, err)
		}
		var e *store.Error
		if !errors.As(err, &e) || e.Status != 412 {
			t.Errorf("want the server's 412, got %#v", err)
		}
		data, got := readAll(t, b, "k", nil)
		if string(data) != "first" || got.ETag != first.ETag {
			t.Fatalf("existing object changed: %d bytes, ETag %s (was %s)", len(data), got.ETag, first.ETag)
		}
	}
	// A stale replace of several chunks fails the same way.
	_, err = b.Put(ctx, "k", bytes.NewReader(body), &store.PutOptions{Size: int64(len(body)), IfMatch: "1"})
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("resumable replace with a stale generation: %v", err)
	}
	if data, _ := readAll(t, b, "k", nil); string(data) != "first" {
		t.Fatalf("existing object changed by a failed replace")
	}
}

// failAfter reads r and fails with err after n bytes.
type failAfter struct {
	r   io.Reader
	n   int64
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, f.err
	}
	if int64(len(p)) > f.n {
		p = p[:f.n]
	}
	k, err := f.r.Read(p)
	f.n -= int64(k)
	return k, err
}

// TestFakeGCSBodyFails: a body whose reader fails (after several chunks have been sent, or
// within what would be one request), a body shorter or longer than its stated size, and a
// cancelled context each leave nothing at the key; the first wraps the body's error, the last
// is the bare context error. (The short single-request case once left a short object: the
// SDK's upload library closes a multipart body cleanly on a read error.)
func TestFakeGCSBodyFails(t *testing.T) {
	b := openFake(t, largeConfig())
	ctx := context.Background()
	data := randomBytes(t, largeSize)
	boom := errors.New("the body broke")
	for _, size := range []int64{int64(len(data)), -1} {
		body := &failAfter{r: bytes.NewReader(data), n: 5*minChunk + 17, err: boom}
		_, err := b.Put(ctx, "broken", body, &store.PutOptions{Size: size})
		if !errors.Is(err, boom) || !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("failing body (size %d): %v, want it to wrap the body's error", size, err)
		}
		wantAbsent(t, b, "broken")
		// Small enough for one request: the request is cut off before its end.
		body = &failAfter{r: bytes.NewReader(data), n: minChunk / 2, err: boom}
		if _, err = b.Put(ctx, "broken", body, &store.PutOptions{Size: size}); !errors.Is(err, boom) {
			t.Errorf("failing body of one request (size %d): %v", size, err)
		}
		wantAbsent(t, b, "broken")
	}
	body := &failAfter{r: bytes.NewReader(data), n: 3 * minChunk / 2, err: boom}
	if _, err := b.Put(ctx, "broken", body, &store.PutOptions{Size: 2 * minChunk, PartSize: 4 * minChunk}); !errors.Is(err, boom) {
		t.Errorf("failing body of one known-size request: %v", err)
	}
	wantAbsent(t, b, "broken")
	for _, size := range []int64{10, largeSize} { // one request; resumable
		_, err := b.Put(ctx, "short", bytes.NewReader(data[:size-1]), &store.PutOptions{Size: size})
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("body shorter than its size %d: %v", size, err)
		}
		wantAbsent(t, b, "short")
	}
	if _, err := b.Put(ctx, "long", bytes.NewReader(data[:11]), &store.PutOptions{Size: 10}); err == nil {
		t.Errorf("body longer than its size: no error")
	}
	wantAbsent(t, b, "long")
	_, err := b.Put(ctx, "long", bytes.NewReader(data), &store.PutOptions{Size: 3 * minChunk})
	if err == nil {
		t.Errorf("body longer than its size: no error")
	}
	wantAbsent(t, b, "long")

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cbody := &cancelAfter{r: bytes.NewReader(data), n: 5 * minChunk, cancel: cancel}
	_, err = b.Put(cctx, "cancelled", cbody, &store.PutOptions{Size: -1, IfNoneMatch: true})
	if !errors.Is(err, context.Canceled) || errcode.NameOf(err) != "" {
		t.Errorf("cancelled put: %v, want the bare context error", err)
	}
	wantAbsent(t, b, "cancelled")
}

// cancelAfter reads r and cancels after n bytes.
type cancelAfter struct {
	r      io.Reader
	n      int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	m, err := c.r.Read(p)
	if c.n -= int64(m); c.n <= 0 {
		c.cancel()
	}
	return m, err
}

func wantAbsent(t *testing.T, s objects, key string) {
	t.Helper()
	if _, err := s.Head(context.Background(), key); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("head %s: %v, want ErrNotExist (nothing at the key)", key, err)
	}
}

// TestFakeGCSBucketMissing: every operation on a bucket that does not exist is
// ErrBucketMissing, whose message names the bucket, never ErrNotExist — on the raw Bucket and
// through store.Open with a prefix, for single-request and resumable puts alike.
func TestFakeGCSBucketMissing(t *testing.T) {
	srv := testenv.FakeGCS(t)
	cfg := emulatorConfig(srv)
	cfg.PartSize = minChunk
	name := uniqueBucket() + "-missing"
	raw := openBucket(t, name, cfg)
	opened, err := store.Open(context.Background(), "gs://"+name+"/pre", cfg.storeConfig())
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 3*minChunk)
	for what, s := range map[string]*store.Store{"raw": store.New(raw, nil), "opened": opened} {
		ctx := context.Background()
		check := func(op string, err error) {
			t.Helper()
			if !errors.Is(err, store.ErrBucketMissing) || errors.Is(err, store.ErrNotExist) {
				t.Errorf("%s %s: %v, want ErrBucketMissing only", what, op, err)
			} else if !strings.Contains(err.Error(), name) {
				t.Errorf("%s %s: %v does not name the bucket", what, op, err)
			}
		}
		_, err := s.Get(ctx, "k", nil)
		check("get", err)
		_, err = s.Head(ctx, "k")
		check("head", err)
		_, err = s.List(ctx, &store.ListOptions{})
		check("list", err)
		_, err = s.Put(ctx, "k", strings.NewReader("x"), &store.PutOptions{Size: 1})
		check("put", err)
		_, err = s.Put(ctx, "k", bytes.NewReader(big), &store.PutOptions{Size: int64(len(big)), IfNoneMatch: true})
		check("resumable conditional put", err)
		_, err = s.Put(ctx, "k", onlyReader{bytes.NewReader(big)}, &store.PutOptions{Size: -1})
		check("resumable put of unknown size", err)
		check("delete", s.Delete(ctx, "k", nil))
		_, err = s.Copy(ctx, "k", "k2", nil)
		check("copy", err)
	}
}

// TestFakeGCSContention races writers on fake-gcs-server through ProbeContention and asserts
// what it really does: one winner per create, no lost If-Match update, every read a written
// value; but a delete with a superseded generation deletes.
func TestFakeGCSContention(t *testing.T) {
	srv := testenv.FakeGCS(t)
	name := uniqueBucket()
	s, err := store.Open(context.Background(), "gs://"+name, emulatorConfig(srv).storeConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.MakeBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := s.Bucket().(*Bucket)
	t.Cleanup(func() { removeBucket(t, b) })
	res, err := probe.Contention(context.Background(), s, probe.ContentionOptions{Writers: 4, Rounds: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		probe.CheckOneWinner: probe.Pass, probe.CheckNoLostUpdate: probe.Pass,
		probe.CheckReadsAreWrites: probe.Pass, probe.CheckStaleDelete: probe.Fail,
	}
	for check, v := range want {
		if got := res.Checks[check]; got.Verdict != v {
			t.Errorf("%s: %s (%s), want %s", check, got.Verdict, got.Evidence, v)
		}
	}
	if res.Passed || res.Errors != 0 {
		t.Errorf("passed %v with %d errors, want false with none", res.Passed, res.Errors)
	}
}
