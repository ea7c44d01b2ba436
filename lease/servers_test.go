package lease

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	_ "github.com/wharfdata/wharf/store/azure" // the az:// backend
	_ "github.com/wharfdata/wharf/store/gcs"   // the gs:// backend
	"github.com/wharfdata/wharf/store/probe"
	_ "github.com/wharfdata/wharf/store/s3" // the s3:// backend
)

var bucketSeq atomic.Int64

func uniqueBucket(kind string) string {
	return fmt.Sprintf("wharf-lease-%s-%d-%d", kind, os.Getpid(), bucketSeq.Add(1))
}

// openFresh opens url with cfg, makes its bucket, and empties it when the test ends.
func openFresh(t testing.TB, url string, cfg *store.Config) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), url, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MakeBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		objs, err := s.ListAll(ctx, "")
		if err == nil {
			keys := make([]string, len(objs))
			for i, o := range objs {
				keys[i] = o.Key
			}
			err = s.DeleteMany(ctx, keys)
		}
		if err != nil {
			t.Logf("cleanup: %v", err)
		}
		s.Close()
	})
	return s
}

// minioStore opens a fresh bucket on srv (MinIO, or a fault proxy in front of it).
func minioStore(t testing.TB, srv testenv.S3Server) *store.Store {
	return openFresh(t, "s3://"+uniqueBucket("s3")+"/jobs", srv.StoreConfig(t))
}

func fakeGCSStore(t testing.TB) *store.Store {
	srv := testenv.FakeGCS(t)
	return openFresh(t, "gs://"+uniqueBucket("gs"), &store.Config{Getenv: os.Getenv, Set: []store.Setting{
		{Name: "endpoint", Value: srv.Endpoint}, {Name: "anonymous", Value: "true"}}})
}

func azuriteStore(t testing.TB) *store.Store {
	srv := testenv.Azurite(t)
	return openFresh(t, "az://"+srv.Account+"/"+uniqueBucket("az"), &store.Config{Getenv: os.Getenv, Set: []store.Setting{
		{Name: "endpoint", Value: srv.Endpoint}, {Name: "account_key", Value: srv.KeyRef(t)}}})
}

// probed probes s and requires cas: the history check runs where the probe says cas.
func probed(t *testing.T, s *store.Store) *probe.Result {
	t.Helper()
	res, err := probe.Run(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Coordination != probe.CAS {
		t.Fatalf("%s: the probe says %s (%s)", s.Describe().Location, res.Coordination, res.Reason)
	}
	return res
}

func TestHistoryLinearizableOnMinIO(t *testing.T) {
	s := minioStore(t, testenv.MinIO(t))
	verifyHistory(t, s, probed(t, s))
}

func TestHistoryLinearizableOnFileStore(t *testing.T) {
	s := fileStore(t, t.TempDir(), "")
	verifyHistory(t, s, probed(t, s))
}

func TestHistoryLinearizableOnAzurite(t *testing.T) {
	s := azuriteStore(t)
	verifyHistory(t, s, probed(t, s))
}

func TestHistoryLinearizableOnFakeGCS(t *testing.T) {
	s := fakeGCSStore(t)
	verifyHistory(t, s, probed(t, s))
}
