package azure

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

var containerSeq atomic.Int64

// uniqueContainer returns a container name no other test uses.
func uniqueContainer() string {
	return fmt.Sprintf("wharf-az-%d-%d", os.Getpid(), containerSeq.Add(1))
}

// azuriteConfig returns a config for Azurite's test account with its key as a reference.
func azuriteConfig(t *testing.T, srv testenv.AzureServer) store.Config {
	return store.Config{Endpoint: srv.Endpoint, AccountKey: srv.KeyRef(t)}
}

// relaxed gives each attempt more time than the default 2 s / 4 s / 10 s: the tests check
// semantics, run in parallel on two shared cores, and the timeouts are tested on their own.
func relaxed(cfg store.Config) store.Config {
	p := store.DefaultRetryPolicy()
	p.ResponseTimeouts = []time.Duration{20 * time.Second, 30 * time.Second, 60 * time.Second}
	cfg.Retry = p
	return cfg
}

// openURL opens az://account/name the way store.Open does and, with make, creates the
// container and deletes it when the test ends.
func openURL(t *testing.T, account, name string, cfg store.Config, make bool) store.Store {
	t.Helper()
	s, err := store.OpenURL(context.Background(), "az://"+account+"/"+name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if make {
		if err := store.MakeBucket(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		c, _ := store.As[*Container](s)
		t.Cleanup(func() { removeContainer(t, c) })
	}
	return s
}

// openAzurite opens a fresh container on Azurite's test account, deleted when the test ends,
// and returns the wrapped store and the raw Container.
func openAzurite(t *testing.T, cfg store.Config) (store.Store, *Container) {
	t.Helper()
	srv := testenv.Azurite(t)
	base := relaxed(azuriteConfig(t, srv))
	base.PartSize, base.Concurrency = cfg.PartSize, cfg.Concurrency
	s := openURL(t, srv.Account, uniqueContainer(), base, true)
	c, _ := store.As[*Container](s)
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
