package lease

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/wharfdata/wharf/cas/natskv"
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
	url := "s3://" + uniqueBucket("s3") + "/jobs"
	probed(t, openFresh(t, url, storeConfigFor(t, "s3")))
	verifyProcesses(t, "s3", url)
}

func TestHistoryLinearizableOnFileStore(t *testing.T) {
	dir := t.TempDir()
	probed(t, fileStore(t, dir, ""))
	verifyProcesses(t, "file", dir)
}

func TestHistoryLinearizableOnAzurite(t *testing.T) {
	url := "az://" + testenv.Azurite(t).Account + "/" + uniqueBucket("az")
	probed(t, openFresh(t, url, storeConfigFor(t, "az")))
	verifyProcesses(t, "az", url)
}

func TestHistoryLinearizableOnFakeGCS(t *testing.T) {
	url := "gs://" + uniqueBucket("gs")
	probed(t, openFresh(t, url, storeConfigFor(t, "gs")))
	verifyProcesses(t, "gs", url)
}

// The checker is not vacuous across processes either: on MinIO behind a proxy that strips
// every condition (a store that ignores them, which the probe would refuse), the history of
// six client processes is found illegal.
func TestHistoryCheckerCatchesIgnoredConditionsOnMinIO(t *testing.T) {
	p, psrv := testenv.FaultProxy(t, testenv.MinIO(t))
	url := "s3://" + uniqueBucket("s3") + "/jobs"
	openFresh(t, url, storeConfigFor(t, "s3"))
	p.StripConditions(true)
	o := historySize()
	o.rounds = 20
	ops := runProcesses(t, "s3", url, o, "WHARF_TEST_MINIO_ENDPOINT="+psrv.Endpoint, envHistoryBroken+"=1")
	res, summary := checkHistory(t, ops)
	t.Logf("conditions stripped: %s: %s", res, summary)
	if res != porcupine.Illegal {
		t.Fatalf("the checker found the history without conditions %s, want illegal: %s", res, summary)
	}
}

// natsBucket makes a fresh key-value bucket (three replicas) on the test cluster for a
// history run, deleted when t ends.
func natsBucket(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("wharf-lease-history-%d-%d", os.Getpid(), bucketSeq.Add(1))
	kv, err := natskv.Open(context.Background(), natskv.Options{Servers: testenv.NATS(t).URL(), Bucket: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kv.DeleteBucket(context.Background()); kv.Close() })
	return name
}

// The one lease engine over NATS JetStream key-value: the same history check, each client a
// process of its own.
func TestHistoryLinearizableOnNATS(t *testing.T) {
	verifyProcesses(t, "nats", natsBucket(t))
}

// The checker is not vacuous over NATS either: with the revisions ignored (last writer wins),
// the history of six client processes is found illegal.
func TestHistoryCheckerCatchesIgnoredRevisionsOnNATS(t *testing.T) {
	o := historySize()
	o.rounds = 20
	ops := runProcesses(t, "nats", natsBucket(t), o, envHistoryBroken+"=1")
	res, summary := checkHistory(t, ops)
	t.Logf("revisions ignored: %s: %s", res, summary)
	if res != porcupine.Illegal {
		t.Fatalf("the checker found the history without compare-and-set %s, want illegal: %s", res, summary)
	}
}
