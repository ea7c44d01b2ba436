package azure

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

var containerSeq atomic.Int64

// uniqueContainer returns a container name no other test uses.
func uniqueContainer() string {
	return fmt.Sprintf("wharf-az-%d-%d", os.Getpid(), containerSeq.Add(1))
}

// azuriteConfig returns a config for Azurite's test account with its key as a reference.
func azuriteConfig(t *testing.T, srv testenv.AzureServer) testConfig {
	return testConfig{Options: Options{Endpoint: srv.Endpoint, AccountKey: srv.KeyRef(t)}}
}

// relaxed gives each attempt more time than the default 2 s / 4 s / 10 s: the tests check
// semantics, run in parallel on two shared cores, and the timeouts are tested on their own.
func relaxed(cfg testConfig) testConfig {
	p := store.DefaultRetryPolicy()
	p.ResponseTimeouts = []time.Duration{20 * time.Second, 30 * time.Second, 60 * time.Second}
	cfg.Retry = p
	return cfg
}

// openURL opens az://account/name the way store.Open does and, with make, creates the
// container and deletes it when the test ends.
func openURL(t *testing.T, account, name string, cfg testConfig, make bool) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), "az://"+account+"/"+name, cfg.storeConfig())
	if err != nil {
		t.Fatal(err)
	}
	if make {
		if err := s.MakeBucket(context.Background()); err != nil {
			t.Fatal(err)
		}
		c := s.Bucket().(*Container)
		t.Cleanup(func() { removeContainer(t, c) })
	}
	return s
}

// openAzurite opens a fresh container on Azurite's test account, deleted when the test ends,
// and returns the wrapped store and the raw Container.
func openAzurite(t *testing.T, cfg testConfig) (*store.Store, *Container) {
	t.Helper()
	srv := testenv.Azurite(t)
	base := relaxed(azuriteConfig(t, srv))
	base.PartSize, base.Concurrency = cfg.PartSize, cfg.Concurrency
	s := openURL(t, srv.Account, uniqueContainer(), base, true)
	c := s.Bucket().(*Container)
	return s, c
}

func removeContainer(t *testing.T, c *Container) {
	if err := c.DeleteContainer(context.Background()); err != nil {
		t.Logf("cleanup: %v", err)
	}
}

// randomData returns n pseudo-random bytes from seed.
func randomData(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func mustCred(t *testing.T, srv testenv.AzureServer) *container.SharedKeyCredential {
	t.Helper()
	cred, err := container.NewSharedKeyCredential(srv.Account, srv.Key)
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

// testConfig is what the tests open a Container with: the backend's options and the
// settings every backend shares.
type testConfig struct {
	Options
	Retry     *driver.RetryPolicy
	Logger    *slog.Logger
	Allowlist []string
}

func (c *testConfig) common(getenv func(string) string) *driver.Common {
	return &driver.Common{Retry: c.Retry, Logger: c.Logger, Allowlist: c.Allowlist, Getenv: getenv}
}

// storeConfig is c as package store opens it, with the process's environment.
func (c testConfig) storeConfig() *store.Config {
	o := c.Options
	return &store.Config{Options: &o, Retry: c.Retry, Logger: c.Logger, Allowlist: c.Allowlist, Getenv: os.Getenv}
}

// newContainer opens a raw Container as store.Open would, reading the environment getenv.
func newContainer(loc driver.Location, cfg *testConfig, getenv func(string) string) (*Container, error) {
	c := cfg.common(getenv)
	if err := cfg.Options.Check(loc, c); err != nil {
		return nil, err
	}
	return New(context.Background(), loc, &cfg.Options, c)
}

func credsOf(loc driver.Location, cfg *testConfig, getenv func(string) string) (creds, error) {
	return resolveCreds(loc, &cfg.Options, cfg.common(getenv))
}

func serviceURLOf(loc driver.Location, cfg *testConfig, cr creds) (string, error) {
	return serviceURL(loc, &cfg.Options, cfg.common(nil), cr)
}
