package gcs

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

var bucketSeq atomic.Int64

// uniqueBucket returns a bucket name no other test uses.
func uniqueBucket() string {
	return fmt.Sprintf("wharf-gcs-%d-%d", os.Getpid(), bucketSeq.Add(1))
}

// emulatorConfig reaches fake-gcs-server without credentials.
func emulatorConfig(srv testenv.GCSServer) store.Config {
	return store.Config{Endpoint: srv.Endpoint, Anonymous: true}
}

// openBucket opens a raw Bucket named name with cfg, checked as store.Open checks it.
func openBucket(t *testing.T, name string, cfg store.Config) *Bucket {
	t.Helper()
	loc, err := store.ParseURL("gs://" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Check(loc); err != nil {
		t.Fatal(err)
	}
	b, err := New(context.Background(), loc, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// openFake opens a raw Bucket on a fresh fake-gcs-server bucket, removed when the test ends.
func openFake(t *testing.T, extra store.Config) *Bucket {
	t.Helper()
	cfg := emulatorConfig(testenv.FakeGCS(t))
	cfg.PartSize, cfg.Retry = extra.PartSize, extra.Retry
	b := openBucket(t, uniqueBucket(), cfg)
	if err := b.MakeBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeBucket(t, b) })
	return b
}

// removeBucket deletes every object of b and then b.
func removeBucket(t *testing.T, b *Bucket) {
	ctx := context.Background()
	objs, err := store.ListAll(ctx, b, "")
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
	if err := b.bucket.Delete(ctx); err != nil {
		t.Logf("cleanup: deleting bucket %s: %v", b.name, err)
	}
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func readAll(t *testing.T, s store.Store, key string, opts *store.GetOptions) ([]byte, store.ObjectInfo) {
	t.Helper()
	obj, err := s.Get(context.Background(), key, opts)
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

// onlyReader hides every method but Read.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
