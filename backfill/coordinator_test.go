package backfill

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store/probe"
)

// The bucket coordinator keeps a job as the objects its doc names, below BucketPrefix(job):
// the plan and the descriptors, created once, and the job's leases (the leader's, whose state
// is the current plan; each split's; the node id's), and nothing else.
func TestTheBucketCoordinatorKeepsTheDocumentedRecords(t *testing.T) {
	src := memStore()
	c := fill(t, src, "logs/", 9, 30, "plain", "gz")
	cfg := testConfig("mem://src/logs/", "-")
	coord := NewBucket(src.Sub(BucketPrefix("layout")), nil)
	var out syncBuffer
	if _, err := runJob(context.Background(), t, cfg, coord, src, NewStdout(&out, cfg.CommitInterval), false); err != nil {
		t.Fatal(err)
	}
	c.check(t, out.Bytes(), true)
	objs, err := src.ListAll(context.Background(), BucketPrefix("layout"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		k := strings.TrimPrefix(o.Key, BucketPrefix("layout"))
		switch {
		case strings.HasPrefix(k, "plans/") && strings.HasSuffix(k, ".json"):
			kinds["plan"]++
		case strings.HasPrefix(k, "splits/") && strings.HasSuffix(k, ".json"):
			kinds["split"]++
		case k == lease.LeaseKey(leaderLease):
			kinds["leader"]++
		case strings.HasPrefix(k, lease.LeaseKey("split-")[:len(lease.LeasePrefix)+6]):
			kinds["split lease"]++
		case k == lease.LeaseKey(nodeLeaseName(cfg.Node)):
			kinds["node lease"]++
		default:
			t.Errorf("a record the doc does not name: %s", k)
		}
	}
	// 9 objects in splits of 7: 2 splits, a plan header and one page.
	if want := map[string]int{"plan": 2, "split": 2, "leader": 1, "split lease": 2, "node lease": 1}; !maps.Equal(kinds, want) {
		t.Fatalf("records %v, want %v", kinds, want)
	}
	r, err := Report(context.Background(), coord, "layout")
	if err != nil || r.State != JobSucceeded || r.Splits[StatusDone] != 2 || r.Records != int64(c.total) || r.Generation != 1 {
		t.Fatalf("report %+v %v", r, err)
	}
}

// The bucket coordinator takes its leases by lease.Open: a store the probe did not prove cas
// is refused before anything is read (ErrCoordinationUnproven).
func TestTheBucketCoordinatorNeedsAStoreProvenCAS(t *testing.T) {
	src := memStore()
	fill(t, src, "logs/", 3, 10, "plain")
	cfg := testConfig("mem://src/logs/", "-")
	single := &probe.Result{Store: src.Describe(), Coordination: probe.SingleWriter, Reason: "test: conditions not enforced"}
	coord := NewBucket(src.Sub(BucketPrefix("unproven")), &lease.Options{Probe: single})
	var out syncBuffer
	_, err := runJob(context.Background(), t, cfg, coord, src, NewStdout(&out, cfg.CommitInterval), false)
	if !errors.Is(err, lease.ErrCoordinationUnproven) || len(out.Bytes()) != 0 {
		t.Fatalf("Run = %v with %d bytes out, want ErrCoordinationUnproven and nothing read", err, len(out.Bytes()))
	}
}
