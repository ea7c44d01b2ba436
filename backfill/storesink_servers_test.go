package backfill

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	_ "github.com/wharfdata/wharf/store/azure" // az:// for Azurite
	_ "github.com/wharfdata/wharf/store/file"  // the folder store
	_ "github.com/wharfdata/wharf/store/gcs"   // gs:// for fake-gcs-server
)

var sinkBuckets atomic.Int64

// freshDestination opens a new, empty destination prefix out/ on the store kind names.
func freshDestination(t *testing.T, kind string) *store.Store {
	t.Helper()
	name := fmt.Sprintf("wharf-bf-sink-%d-%d", os.Getpid(), sinkBuckets.Add(1))
	var url string
	var cfg *store.Config
	switch kind {
	case "file":
		url = t.TempDir()
	case "s3":
		srv := testenv.MinIO(t)
		url, cfg = "s3://"+name, srv.StoreConfig(t)
		srv.RemoveBucketOnCleanup(t, name)
	case "gs":
		srv := testenv.FakeGCS(t)
		url = "gs://" + name
		cfg = &store.Config{Getenv: os.Getenv, Set: []store.Setting{{Name: "endpoint", Value: srv.Endpoint}, {Name: "anonymous", Value: "true"}}}
	case "az":
		srv := testenv.Azurite(t)
		url = "az://" + srv.Account + "/" + name
		cfg = &store.Config{Getenv: os.Getenv, Set: []store.Setting{{Name: "endpoint", Value: srv.Endpoint}, {Name: "account_key", Value: srv.KeyRef(t)}}}
	}
	s, err := store.Open(context.Background(), url, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MakeBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Sub("out")
}

// On every store a split whose part is already there with its records (a worker killed
// between writing the part and committing the split, or a replay) is counted written: the
// folder store refuses the create before it takes the body, the others after.
func TestStoreSinkCountsAPartAlreadyThereOnEveryStore(t *testing.T) {
	for _, kind := range []string{"file", "s3", "gs", "az"} {
		t.Run(kind, func(t *testing.T) {
			src := memStore()
			c := fill(t, src, "logs/", 12, 200, "plain", "gz", "zst")
			out := freshDestination(t, kind)
			cfg := testConfig("mem://src/logs/", "dst://out/")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if _, err := runJob(ctx, t, cfg, NewSolo(), src, NewStoreSink(out, cfg.To, cfg.Job, "test"), false); err != nil {
				t.Fatal(err)
			}
			_, first := parts(t, out)
			if _, err := runJob(ctx, t, cfg, NewSolo(), src, NewStoreSink(out, cfg.To, cfg.Job, "test"), false); err != nil {
				t.Fatalf("a replay over the parts already there: %v", err)
			}
			records, second := parts(t, out)
			c.check(t, records, true)
			for k, b := range first {
				if !bytes.Equal(b, second[k]) {
					t.Fatalf("part %s changed on replay", k)
				}
			}
			v, err := dataset.Validate(ctx, out, "out/", true)
			if err != nil || !v.Certified {
				t.Fatalf("validate --deep: %v %+v", err, v)
			}
		})
	}
}
