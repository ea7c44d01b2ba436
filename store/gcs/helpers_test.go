package gcs

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

var bucketSeq atomic.Int64

// uniqueBucket returns a bucket name no other test uses.
func uniqueBucket() string {
	return fmt.Sprintf("wharf-gcs-%d-%d", os.Getpid(), bucketSeq.Add(1))
}

// emulatorConfig reaches fake-gcs-server without credentials.
func emulatorConfig(srv testenv.GCSServer) testConfig {
	return testConfig{Options: Options{Endpoint: srv.Endpoint, Anonymous: true}}
}

// openBucket opens a raw Bucket named name with cfg, checked as store.Open checks it.
func openBucket(t *testing.T, name string, cfg testConfig) *Bucket {
	t.Helper()
	loc, err := store.ParseURL("gs://" + name)
	if err != nil {
		t.Fatal(err)
	}
	cfg.FromEnv(os.Getenv)
	if err := cfg.Options.Check(loc, cfg.common()); err != nil {
		t.Fatal(err)
	}
	b, err := New(context.Background(), loc, &cfg.Options, cfg.common())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// openFake opens a raw Bucket on a fresh fake-gcs-server bucket, removed when the test ends.
func openFake(t *testing.T, extra testConfig) *Bucket {
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
	st := store.New(b, nil)
	objs, err := st.ListAll(ctx, "")
	if err != nil {
		t.Logf("cleanup: %v", err)
		return
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	if err := st.DeleteMany(ctx, keys); err != nil {
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

func readAll(t *testing.T, s objects, key string, opts *store.GetOptions) ([]byte, store.ObjectInfo) {
	t.Helper()
	if opts == nil {
		opts = &store.GetOptions{}
	}
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

// testConfig is what the tests open a Bucket with: the backend's options and the settings
// every backend shares.
type testConfig struct {
	Options
	Retry     *driver.RetryPolicy
	Logger    *slog.Logger
	Allowlist []string
}

func (c *testConfig) common() *driver.Common {
	return &driver.Common{Retry: c.Retry, Logger: c.Logger, Allowlist: c.Allowlist, Getenv: os.Getenv}
}

// storeConfig is c as package store opens it: the options as given, the environment read.
func (c testConfig) storeConfig() *store.Config {
	o := c.Options
	o.FromEnv(os.Getenv)
	if c.Endpoint != "" {
		o.Endpoint = c.Endpoint
	}
	return &store.Config{Options: &o, Retry: c.Retry, Logger: c.Logger, Allowlist: c.Allowlist, Getenv: os.Getenv}
}

// objects is what readAll and wantAbsent need: a raw Bucket or a store over one.
type objects interface {
	Get(context.Context, string, *store.GetOptions) (*store.Object, error)
	Head(context.Context, string) (store.ObjectInfo, error)
}
