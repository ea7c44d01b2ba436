package backfill_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/cas/natskv"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/mem"
)

// openNATS opens the coordinator of job on cluster, as `wharf backfill --coordinator nats://`
// does: the key-value bucket NATSBucket(job), deleted when t ends.
func openNATS(t *testing.T, cluster testenv.NATSCluster, job string) *backfill.Coordinator {
	t.Helper()
	k, err := natskv.Open(context.Background(), natskv.Options{Servers: cluster.URL(), Bucket: backfill.NATSBucket(job), RetryFor: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.DeleteBucket(context.Background()); k.Close() })
	return backfill.NewCAS(k)
}

// slowGets delays every Get, so that a job lasts long enough to lose a NATS node midway.
type slowGets struct{ driver.Bucket }

func (s slowGets) Unwrap() driver.Bucket { return s.Bucket }

func (s slowGets) Get(ctx context.Context, key string, o *driver.GetOptions) (*driver.Object, error) {
	time.Sleep(15 * time.Millisecond)
	return s.Bucket.Get(ctx, key, o)
}

// Two workers share a job over a 3-node cluster of the test's own, their leases on the one
// lease engine over cas/natskv; one NATS node is SIGKILLed midway and started again later.
// The job completes on both workers and every record is delivered.
func TestAJobSurvivesTheLossOfANATSNode(t *testing.T) {
	cluster := testenv.PrivateNATS(t)
	job := fmt.Sprintf("nodekill-%d", time.Now().UnixNano())
	src := store.New(slowGets{mem.New()}, nil)
	want := map[string]bool{}
	for i := range 160 {
		var b bytes.Buffer
		for r := range 50 {
			line := fmt.Sprintf(`{"o":%d,"r":%d}`, i, r)
			want[line] = true
			b.WriteString(line + "\n")
		}
		if _, err := src.Put(context.Background(), fmt.Sprintf("logs/%04d.ndjson", i), bytes.NewReader(b.Bytes()), nil); err != nil {
			t.Fatal(err)
		}
	}
	cfg := backfill.DefaultConfig()
	cfg.Source, cfg.To, cfg.Job = "mem://src/logs/", "-", job
	cfg.SplitMaxObjects, cfg.MaxInFlight, cfg.ReadConcurrency = 4, 2, 1
	cfg.LeaseTTL, cfg.CommitInterval, cfg.PollInterval = 3*time.Second, 100*time.Millisecond, 50*time.Millisecond
	outs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for w := range 2 {
		k := openNATS(t, cluster, job)
		c := cfg
		c.Node = fmt.Sprintf("worker-%d", w)
		j, err := backfill.New(c, backfill.Options{Coordinator: k, Source: src, Prefix: "logs/", Sink: backfill.NewStdout(&outs[w], c.CommitInterval)})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { errs[w] = j.Run(context.Background()) })
	}
	time.Sleep(400 * time.Millisecond)
	restart := cluster.KillNode(t, 1)
	time.Sleep(1500 * time.Millisecond)
	restart()
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", w, err)
		}
	}
	got := map[string]bool{}
	for _, o := range outs {
		for l := range bytes.Lines(o.Bytes()) {
			got[string(bytes.TrimSuffix(l, []byte("\n")))] = true
		}
	}
	for l := range want {
		if !got[l] {
			t.Fatalf("record %s never delivered (%d of %d distinct records out)", l, len(got), len(want))
		}
	}
	if outs[0].Len() == 0 || outs[1].Len() == 0 {
		// Which worker gets which split is the coordinator's timing: a worker whose node was
		// killed may find every split taken by the time it is back (CI saw it once, on a
		// loaded machine). The promise this test proves is delivery across the lost node.
		t.Logf("one worker did everything: %d and %d bytes", outs[0].Len(), outs[1].Len())
	}
}
