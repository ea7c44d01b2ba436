package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

var bucketSeq atomic.Int64

// minioConfig returns a config for the MinIO server with its keys as references.
func minioConfig(t *testing.T, srv testenv.S3Server) testConfig {
	ak, sk := srv.Refs(t)
	return testConfig{Options: Options{Endpoint: srv.Endpoint, Region: srv.Region, AccessKeyID: ak, SecretAccessKey: sk}}
}

// uniqueBucket returns a bucket name no other test uses.
func uniqueBucket(t *testing.T) string {
	return fmt.Sprintf("wharf-s3-%d-%d", os.Getpid(), bucketSeq.Add(1))
}

// openMinIO opens a raw Bucket on a fresh MinIO bucket, removed when the test ends.
func openMinIO(t *testing.T, cfg testConfig) *Bucket {
	t.Helper()
	srv := testenv.MinIO(t)
	if cfg.Endpoint == "" {
		cfg = mergeConfig(minioConfig(t, srv), cfg)
	}
	b := openBucket(t, uniqueBucket(t), cfg)
	if err := b.MakeBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeBucket(t, b) })
	return b
}

func mergeConfig(base, extra testConfig) testConfig {
	base.PartSize, base.Concurrency = extra.PartSize, extra.Concurrency
	return base
}

func openBucket(t *testing.T, name string, cfg testConfig) *Bucket {
	t.Helper()
	loc, err := store.ParseURL("s3://" + name)
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
	return b
}

func removeBucket(t *testing.T, b *Bucket) {
	ctx := context.Background()
	objs, err := store.New(b, nil).ListAll(ctx, "")
	if err != nil {
		t.Logf("cleanup: %v", err)
		return
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	if err := b.DeleteMany(ctx, keys); err != nil {
		t.Logf("cleanup: %v", err)
	}
	if _, err := b.api.(*s3.Client).DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(b.bucket)}); err != nil {
		t.Logf("cleanup: %v", err)
	}
}

// openUploads returns how many multipart uploads are open in b's bucket.
func openUploads(t *testing.T, b *Bucket) int {
	t.Helper()
	out, err := b.api.(*s3.Client).ListMultipartUploads(context.Background(),
		&s3.ListMultipartUploadsInput{Bucket: aws.String(b.bucket)})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Uploads)
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func readAll(t *testing.T, b driver.Bucket, key string, opts *store.GetOptions) ([]byte, store.ObjectInfo) {
	t.Helper()
	if opts == nil {
		opts = &store.GetOptions{}
	}
	obj, err := b.Get(context.Background(), key, opts)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return data, obj.Info
}

func TestMinIORoundTrip(t *testing.T) {
	b := openMinIO(t, testConfig{})
	ctx := context.Background()
	if err := b.MakeBucket(ctx); err != nil {
		t.Fatalf("second MakeBucket of an owned bucket: %v", err)
	}
	md := map[string]string{"wharf-sha256": "abc", "wharf-node": "n1"}
	info, err := b.Put(ctx, "dir/a.txt", strings.NewReader("hello world"),
		&store.PutOptions{Size: 11, ContentType: "text/plain", Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	if info.ETag == "" || strings.Contains(info.ETag, `"`) || info.Size != 11 {
		t.Fatalf("put info %+v", info)
	}
	data, got := readAll(t, b, "dir/a.txt", nil)
	if string(data) != "hello world" || got.ETag != info.ETag || got.ContentType != "text/plain" ||
		got.Metadata["wharf-sha256"] != "abc" || got.LastModified.IsZero() {
		t.Fatalf("get %q %+v", data, got)
	}
	data, got = readAll(t, b, "dir/a.txt", &store.GetOptions{Offset: 6, Length: 3, IfMatch: info.ETag})
	if string(data) != "wor" || got.Size != 11 {
		t.Fatalf("range get %q size %d", data, got.Size)
	}
	data, _ = readAll(t, b, "dir/a.txt", &store.GetOptions{Offset: 11})
	if len(data) != 0 {
		t.Fatalf("read from the end: %q", data)
	}
	head, err := b.Head(ctx, "dir/a.txt")
	if err != nil || head.Size != 11 || head.Metadata["wharf-node"] != "n1" {
		t.Fatalf("head %+v %v", head, err)
	}
	if _, err := b.Head(ctx, "dir/missing"); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("head missing: %v", err)
	}
	if _, err := b.Get(ctx, "dir/missing", &driver.GetOptions{}); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("get missing: %v", err)
	}
	testListAndCopy(t, b)
	testConditions(t, b, info.ETag)
	if err := b.Delete(ctx, "dir/a.txt", &driver.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "dir/a.txt", &driver.DeleteOptions{}); err != nil {
		t.Fatalf("deleting a missing key: %v", err)
	}
}

func testListAndCopy(t *testing.T, b *Bucket) {
	ctx := context.Background()
	cp, err := b.Copy(ctx, "dir/a.txt", "dir/sub/b.txt", &driver.PutOptions{})
	if err != nil || cp.Size != 11 || cp.Metadata["wharf-sha256"] != "abc" {
		t.Fatalf("copy %+v %v", cp, err)
	}
	page, err := b.List(ctx, &store.ListOptions{Prefix: "dir/", Delimiter: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Objects) != 1 || page.Objects[0].Key != "dir/a.txt" || len(page.Prefixes) != 1 || page.Prefixes[0] != "dir/sub/" {
		t.Fatalf("page %+v", page)
	}
	page, err = b.List(ctx, &store.ListOptions{Prefix: "dir/", MaxKeys: 1})
	if err != nil || len(page.Objects) != 1 || page.Next == "" {
		t.Fatalf("first page %+v %v", page, err)
	}
	page, err = b.List(ctx, &store.ListOptions{Prefix: "dir/", MaxKeys: 1, Token: page.Next})
	if err != nil || len(page.Objects) != 1 || page.Objects[0].Key != "dir/sub/b.txt" || page.Next != "" {
		t.Fatalf("second page %+v %v", page, err)
	}
}

func testConditions(t *testing.T, b *Bucket, etag string) {
	ctx := context.Background()
	_, err := b.Put(ctx, "dir/a.txt", strings.NewReader("x"), &store.PutOptions{Size: 1, IfNoneMatch: true})
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("create over an existing key: %v", err)
	}
	_, err = b.Put(ctx, "dir/a.txt", strings.NewReader("x"), &store.PutOptions{Size: 1, IfMatch: "0123456789abcdef0123456789abcdef"})
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("stale If-Match: %v", err)
	}
	_, err = b.Put(ctx, "dir/none", strings.NewReader("x"), &store.PutOptions{Size: 1, IfMatch: etag})
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("If-Match on a missing key: %v", err)
	}
	_, err = b.Get(ctx, "dir/a.txt", &store.GetOptions{IfMatch: "0123456789abcdef0123456789abcdef"})
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("stale pinned read: %v", err)
	}
	if _, err := b.Put(ctx, "dir/a.txt", strings.NewReader("hello world"), &store.PutOptions{Size: 11, IfMatch: etag}); err != nil {
		t.Fatalf("current If-Match: %v", err)
	}
}

func TestMinIOMultipart(t *testing.T) {
	b := openMinIO(t, testConfig{Options: Options{PartSize: MinPartSize, Concurrency: 3}})
	body := randomBytes(t, 40<<20+12345)
	want := sha256.Sum256(body)
	for _, tc := range []struct {
		name string
		r    io.Reader
		size int64
	}{
		{"known size", bytes.NewReader(body), int64(len(body))},
		{"unknown size", onlyReader{bytes.NewReader(body)}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "big/" + strings.ReplaceAll(tc.name, " ", "-")
			info, err := b.Put(context.Background(), key, tc.r, &store.PutOptions{Size: tc.size, Metadata: map[string]string{"wharf-range": "1-2"}})
			if err != nil {
				t.Fatal(err)
			}
			if info.Size != int64(len(body)) || !strings.HasSuffix(info.ETag, "-9") {
				t.Errorf("info %+v: want size %d and 9 parts", info, len(body))
			}
			data, got := readAll(t, b, key, nil)
			if sha256.Sum256(data) != want || got.Metadata["wharf-range"] != "1-2" {
				t.Fatalf("content differs (%d bytes) or metadata lost %v", len(data), got.Metadata)
			}
		})
	}
	if n := openUploads(t, b); n != 0 {
		t.Fatalf("%d uploads left open", n)
	}
}

func TestMinIOConditionalMultipartOnExisting(t *testing.T) {
	b := openMinIO(t, testConfig{Options: Options{PartSize: MinPartSize}})
	ctx := context.Background()
	if _, err := b.Put(ctx, "k", strings.NewReader("first"), &store.PutOptions{Size: 5}); err != nil {
		t.Fatal(err)
	}
	body := randomBytes(t, 20<<20)
	_, err := b.Put(ctx, "k", bytes.NewReader(body), &store.PutOptions{Size: int64(len(body)), IfNoneMatch: true})
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("conditional multipart create over an existing key: %v", err)
	}
	if n := openUploads(t, b); n != 0 {
		t.Fatalf("%d uploads left open", n)
	}
	if data, _ := readAll(t, b, "k", nil); string(data) != "first" {
		t.Fatalf("existing object changed: %d bytes", len(data))
	}
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

func TestMinIOCancelMidMultipart(t *testing.T) {
	b := openMinIO(t, testConfig{Options: Options{PartSize: MinPartSize, Concurrency: 2}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := &cancelAfter{r: bytes.NewReader(randomBytes(t, 40<<20)), n: 17 << 20, cancel: cancel}
	_, err := b.Put(ctx, "cancelled", body, &store.PutOptions{Size: -1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := openUploads(t, b); n != 0 {
		t.Fatalf("%d uploads left open after cancellation", n)
	}
	if _, err := b.Head(context.Background(), "cancelled"); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("head after a cancelled put: %v", err)
	}
}

func TestMinIONoSuchBucket(t *testing.T) {
	srv := testenv.MinIO(t)
	cfg := minioConfig(t, srv)
	raw := openBucket(t, uniqueBucket(t)+"-missing", cfg)
	wrapped, err := store.Open(context.Background(), "s3://"+raw.bucket+"/pre", cfg.storeConfig())
	if err != nil {
		t.Fatal(err)
	}
	type reader interface {
		Get(context.Context, string, *store.GetOptions) (*store.Object, error)
		Head(context.Context, string) (store.ObjectInfo, error)
		List(context.Context, *store.ListOptions) (store.Page, error)
		Put(context.Context, string, io.Reader, *store.PutOptions) (store.ObjectInfo, error)
	}
	for name, s := range map[string]reader{"raw": raw, "opened": wrapped} {
		ctx := context.Background()
		_, err := s.Get(ctx, "k", &driver.GetOptions{})
		check(t, name+" get", err, store.ErrBucketMissing)
		_, err = s.Head(ctx, "k")
		check(t, name+" head", err, store.ErrBucketMissing)
		_, err = s.List(ctx, &store.ListOptions{})
		check(t, name+" list", err, store.ErrBucketMissing)
		_, err = s.Put(ctx, "k", strings.NewReader("x"), &store.PutOptions{Size: 1})
		check(t, name+" put", err, store.ErrBucketMissing)
		_, err = s.Put(ctx, "k", bytes.NewReader(make([]byte, 17<<20)), &store.PutOptions{Size: 17 << 20})
		check(t, name+" multipart put", err, store.ErrBucketMissing)
	}
}

func check(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v", what, err, want)
	}
	if errors.Is(err, store.ErrNotExist) {
		t.Errorf("%s: a missing bucket read as a missing key", what)
	}
}

func TestMinIOWrongSecret(t *testing.T) {
	srv := testenv.MinIO(t)
	cfg := minioConfig(t, srv)
	const wrong = "wrong-secret-9f8e7d6c5b4a"
	path := t.TempDir() + "/secret"
	if err := os.WriteFile(path, []byte(wrong+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.SecretAccessKey = "file://" + path
	s, err := store.Open(context.Background(), "s3://"+uniqueBucket(t), cfg.storeConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, lerr := s.List(ctx, nil)
	_, perr := s.Put(ctx, "k", strings.NewReader("x"), &store.PutOptions{Size: 1})
	_, herr := s.Head(ctx, "k")
	for name, err := range map[string]error{"list": lerr, "put": perr, "head": herr} {
		if !errors.Is(err, store.ErrForbidden) {
			t.Errorf("%s: %v, want ErrForbidden", name, err)
			continue
		}
		msg := fmt.Sprintf("%v %+v %#v", err, err, err)
		if strings.Contains(msg, wrong) || strings.Contains(msg, srv.SecretKey) {
			t.Errorf("%s: the secret is in the error: %s", name, msg)
		}
		if !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error does not name the operation: %v", name, err)
		}
	}
}

// BenchmarkMinIOPutGet64MiB measures one 64 MiB object up and down with default settings.
func BenchmarkMinIOPutGet64MiB(b *testing.B) {
	srv := testenv.MinIO(b)
	ak, sk := srv.Refs(b)
	cfg := testConfig{Options: Options{Endpoint: srv.Endpoint, AccessKeyID: ak, SecretAccessKey: sk}}
	loc, _ := store.ParseURL("s3://" + fmt.Sprintf("wharf-s3-bench-%d", os.Getpid()))
	bk, err := New(context.Background(), loc, &cfg.Options, cfg.common())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := bk.MakeBucket(ctx); err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 64<<20)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := bk.Put(ctx, "bench", bytes.NewReader(body), &store.PutOptions{Size: int64(len(body))}); err != nil {
			b.Fatal(err)
		}
		obj, err := bk.Get(ctx, "bench", &driver.GetOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, obj); err != nil {
			b.Fatal(err)
		}
		obj.Close()
	}
	_ = bk.Delete(ctx, "bench", &driver.DeleteOptions{})
}

// testConfig is what the tests open a Bucket with: the backend's options and the settings
// every backend shares.
type testConfig struct {
	Options
	Retry  *driver.RetryPolicy
	Logger *slog.Logger
}

func (c *testConfig) common() *driver.Common {
	return &driver.Common{Retry: c.Retry, Logger: c.Logger, Getenv: os.Getenv}
}

// storeConfig is c as package store opens it.
func (c testConfig) storeConfig() *store.Config {
	o := c.Options
	return &store.Config{Options: &o, Retry: c.Retry, Logger: c.Logger, Getenv: os.Getenv}
}
