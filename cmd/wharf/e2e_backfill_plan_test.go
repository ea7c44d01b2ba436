package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/cas/natskv"
	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// The tests of a job's one plan: a source on MinIO under in/ whose objects the test knows
// record by record, written to out/ of the same bucket, with the bucket coordinator or NATS;
// and the checker the fleet's history check shares.

// bfJob is one job of those tests.
type bfJob struct {
	c       cli
	ep      []string
	s       *store.Store // the bucket's root
	bucket  string
	job     string
	coord   string // "bucket", or the NATS URLs
	cluster testenv.NATSCluster

	mu      sync.Mutex
	objects map[string][]string // key → its records, in order
}

// newBfJob makes a fresh bucket on MinIO for a job over the coordinator kind ("bucket" or
// "nats", on cluster).
func newBfJob(t *testing.T, kind string, cluster testenv.NATSCluster) *bfJob {
	t.Helper()
	c, ep := minioCLI(t)
	bucket := randomBucket(t)
	s, err := store.Open(context.Background(), "s3://"+bucket, testenv.MinIO(t).StoreConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MakeBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	testenv.MinIO(t).RemoveBucketOnCleanup(t, bucket)
	b := &bfJob{c: c, ep: ep, s: s, bucket: bucket, job: "plan-" + bucket[len(bucket)-8:], coord: "bucket", objects: map[string][]string{}}
	if kind == "nats" {
		b.cluster, b.coord = cluster, cluster.URL()
		dropNATSJob(t, cluster, b.job)
	}
	return b
}

// add writes object key holding n records of its own.
func (b *bfJob) add(t *testing.T, key string, n int) {
	t.Helper()
	var recs []string
	var body bytes.Buffer
	for r := range n {
		rec := fmt.Sprintf(`{"object":%q,"record":%d}`, key, r)
		recs = append(recs, rec)
		body.WriteString(rec + "\n")
	}
	if _, err := b.s.Put(context.Background(), key, bytes.NewReader(body.Bytes()), &store.PutOptions{Size: int64(body.Len())}); err != nil {
		t.Errorf("producer: %v", err)
		return
	}
	b.mu.Lock()
	b.objects[key] = recs
	b.mu.Unlock()
}

// produce adds an object every step (its key sorting among the others: in/obj-<i>-<n>) until
// the returned stop is called.
func (b *bfJob) produce(t *testing.T, step time.Duration, among int) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			case <-time.After(step):
			}
			b.add(t, fmt.Sprintf("in/obj-%05d-%d.ndjson", n*7%among, n), 5)
		}
	}()
	return func() { close(done); <-finished }
}

// args are a worker's arguments: small splits, a 3 s lease, a summary in JSON.
func (b *bfJob) args(more ...string) []string {
	return append(append(append([]string(nil), b.ep...), "backfill", "s3://"+b.bucket+"/in/", "--to", "s3://"+b.bucket+"/out/",
		"--job", b.job, "--coordinator", b.coord, "--lease-ttl", "3s", "--commit-interval", "200ms", "--poll-interval", "100ms",
		"--split-max-objects", "5", "--max-in-flight", "2", "--format", "json", "--log-level", "warn"), more...)
}

// bfProc is one running worker.
type bfProc struct {
	node   string
	cmd    *exec.Cmd
	out    bytes.Buffer
	err    bytes.Buffer
	done   chan struct{}
	code   int // once done: the exit status, -1 when killed by a signal
	killed bool
}

// start starts a worker of node with env added (each "--flag=value" in it is a flag).
func (b *bfJob) start(t *testing.T, node string, env ...string) *bfProc {
	t.Helper()
	c := b.c
	flags := []string{"--node", node}
	for _, e := range env {
		if strings.HasPrefix(e, "--") {
			flags = append(flags, e)
		} else {
			c.env = append(append([]string(nil), c.env...), e)
		}
	}
	p := &bfProc{node: node, cmd: c.command(b.args(flags...)...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill() })
	return p
}

// kill SIGKILLs the worker (if it still runs) and waits for it.
func (p *bfProc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.killed = true
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// wait waits for the worker to end, at most d.
func (p *bfProc) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		p.kill()
		t.Fatalf("worker %s still running after %s:\n%s", p.node, d, p.err.String())
	}
}

// running reports whether the worker has not ended.
func (p *bfProc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// nodeInUse reports whether the worker stopped because another live worker had its node id.
func (p *bfProc) nodeInUse() bool {
	return p.code == 2 && strings.Contains(p.err.String(), "WHARF_BACKFILL_NODE_ID_IN_USE") &&
		strings.Contains(p.err.String(), "start node "+p.node+": ")
}

// summary is what a worker that exited 0 said of the job (its --format json status).
func (p *bfProc) summary() (state, plan string, err error) {
	var st struct {
		State string `json:"state"`
		Plan  string `json:"plan"`
	}
	if err := json.Unmarshal(p.out.Bytes(), &st); err != nil {
		return "", "", fmt.Errorf("worker %s's summary %q: %w", p.node, p.out.String(), err)
	}
	return st.State, st.Plan, nil
}

// records is the coordinator's store of the job's records, as a reader opens it.
func (b *bfJob) records(ctx context.Context) (cas.Store, func(), error) {
	if b.coord == "bucket" {
		return cas.NewBucket(b.s.Sub(backfill.BucketPrefix(b.job))), func() {}, nil
	}
	k, err := natskv.Open(ctx, natskv.Options{Servers: b.coord, Bucket: backfill.NATSBucket(b.job), RetryFor: 30 * time.Second})
	if err != nil {
		return nil, nil, err
	}
	return k, func() { k.Close() }, nil
}

// waitPlanned waits until the job's leader lease holds a plan.
func (b *bfJob) waitPlanned(d time.Duration) error {
	ctx := context.Background()
	kv, closeKV, err := b.records(ctx)
	if err != nil {
		return err
	}
	defer closeKV()
	last := "nothing read"
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var rec struct {
			Holder string
			State  struct{ Plan string } `json:"state"`
		}
		err := getRecord(ctx, kv, "_wharf/leases/leader.json", &rec)
		switch {
		case err == nil && rec.State.Plan != "":
			return nil
		case err != nil:
			last = "the last read failed: " + err.Error()
		default:
			last = fmt.Sprintf("the last read found the leader record held by %q without a plan", rec.Holder)
		}
	}
	return fmt.Errorf("no plan after %s (%s)", d, last)
}

func getRecord(ctx context.Context, kv cas.Store, key string, v any) error {
	raw, _, err := kv.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("record %s: %w", key, err)
	}
	return json.Unmarshal(raw, v)
}

// planObjects reads, from the coordinator's records as docs/backfill.md lays them out, the
// keys of the objects of plan id.
func (b *bfJob) planObjects(ctx context.Context, id string) (map[string]bool, error) {
	kv, closeKV, err := b.records(ctx)
	if err != nil {
		return nil, err
	}
	defer closeKV()
	var plan struct{ Pages, Splits int }
	if err := getRecord(ctx, kv, "plans/"+id+".json", &plan); err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	splits := 0
	for page := range plan.Pages {
		var ids []string
		if err := getRecord(ctx, kv, fmt.Sprintf("plans/%s/%06d.json", id, page), &ids); err != nil {
			return nil, err
		}
		for _, sid := range ids {
			var sp struct{ Members []struct{ Key string } }
			if err := getRecord(ctx, kv, "splits/"+sid+".json", &sp); err != nil {
				return nil, err
			}
			for _, m := range sp.Members {
				keys[m.Key] = true
			}
			splits++
		}
	}
	if splits != plan.Splits {
		return nil, fmt.Errorf("plan %s: %d splits in its pages, its header says %d", id, splits, plan.Splits)
	}
	return keys, nil
}

// status runs `wharf backfill status --format json` on the job.
func (b *bfJob) status(t *testing.T) (backfill.JobReport, error) {
	args := append(append([]string(nil), b.ep...), "backfill", "status", "--job", b.job, "--format", "json", "s3://"+b.bucket+"/in/")
	if b.coord != "bucket" {
		args = append(args, "--coordinator", b.coord)
	}
	r := b.c.run(t, args...)
	var rep backfill.JobReport
	if r.code != 0 {
		return rep, fmt.Errorf("backfill status: exit %d: %s", r.code, r.err)
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil || rep.Plan == nil {
		return rep, fmt.Errorf("backfill status said %q: %v", r.out, err)
	}
	return rep, nil
}

// certified is the checker: nil when the job's end is true. `backfill status` says the job
// succeeded with a plan; the output at out/ is certified (`wharf validate`'s checks) and is
// that plan's (its run id); its parts hold every record of the plan's objects exactly once
// and nothing else; the status's count of records and the manifest's rows are the plan's; and
// every worker in ok (those that exited 0) said the job succeeded with that plan.
func (b *bfJob) certified(t *testing.T, ok []*bfProc) error {
	ctx := context.Background()
	rep, err := b.status(t)
	if err != nil {
		return err
	}
	if rep.State != backfill.JobSucceeded {
		return fmt.Errorf("backfill status: job %s, want succeeded", rep.State)
	}
	id := rep.Plan.ID
	keys, err := b.planObjects(ctx, id)
	if err != nil {
		return err
	}
	if int64(len(keys)) != rep.Plan.Objects {
		return fmt.Errorf("plan %.12s: %d objects in its splits, the status says %d", id, len(keys), rep.Plan.Objects)
	}
	want := map[string]int{}
	b.mu.Lock()
	for k := range keys {
		recs, known := b.objects[k]
		if !known {
			b.mu.Unlock()
			return fmt.Errorf("plan %.12s holds %s, which the test never wrote", id, k)
		}
		for _, r := range recs {
			want[r]++
		}
	}
	b.mu.Unlock()
	v, err := dataset.Validate(ctx, b.s.Sub("out"), "s3://"+b.bucket+"/out/", false)
	if err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	if !v.Certified {
		return fmt.Errorf("the output is not certified: %+v", v.Problems)
	}
	if v.Manifest.RunID != backfill.RunID(rep.Plan) {
		return fmt.Errorf("the certified manifest is run %s, the status's plan %.12s is run %s: two plans", v.Manifest.RunID, id, backfill.RunID(rep.Plan))
	}
	got, rows, err := b.partRecords(ctx, v.Manifest)
	if err != nil {
		return err
	}
	for r, n := range got {
		if want[r] != n {
			return fmt.Errorf("record %s is %d times in the certified parts, %d times in the plan", r, n, want[r])
		}
	}
	for r, n := range want {
		if got[r] != n {
			return fmt.Errorf("record %s of the plan is %d times in the certified parts (%d records in them, %d in the plan)", r, got[r], rows, len(want))
		}
	}
	if rows != int64(len(want)) || v.Manifest.Rows != rows || rep.Records != rows {
		return fmt.Errorf("the plan has %d records, the parts %d, the manifest says %d, the status %d", len(want), rows, v.Manifest.Rows, rep.Records)
	}
	for _, p := range ok {
		state, plan, err := p.summary()
		if err != nil {
			return err
		}
		if state != backfill.StateSucceeded || plan != id {
			return fmt.Errorf("worker %s said the job %s with plan %.12s; the status says plan %.12s", p.node, state, plan, id)
		}
	}
	t.Logf("plan %.12s: %d objects, %d records, certified once each; status and manifest agree", id, len(keys), rows)
	return nil
}

// partRecords reads the records of every part the manifest lists.
func (b *bfJob) partRecords(ctx context.Context, m *dataset.Manifest) (map[string]int, int64, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, 0, err
	}
	defer dec.Close()
	got := map[string]int{}
	var rows int64
	for _, p := range m.Parts {
		obj, err := b.s.Sub("out").Get(ctx, p.Key, nil)
		if err != nil {
			return nil, 0, err
		}
		var raw []byte
		if err = dec.Reset(obj); err == nil {
			raw, err = io.ReadAll(dec)
		}
		obj.Close()
		if err != nil {
			return nil, 0, fmt.Errorf("part %s: %w", p.Key, err)
		}
		for l := range bytes.Lines(raw) {
			got[string(bytes.TrimSuffix(l, []byte("\n")))]++
			rows++
		}
	}
	return got, rows, nil
}

// Point 1: two workers started together under one node id, every GET taking 100 ms, while a
// producer adds objects under the prefix: the job has one plan, which `backfill status`
// reports and the certified manifest belongs to, with every record of its objects once; and
// one of the two is told that another worker has its node id (exit 2), the other succeeds.
// On the bucket coordinator and on NATS.
func TestE2EBackfillTwoWorkersStartedTogetherMakeOnePlan(t *testing.T) {
	for _, kind := range []string{"bucket", "nats"} {
		t.Run(kind, func(t *testing.T) {
			var cluster testenv.NATSCluster
			if kind == "nats" {
				cluster = testenv.PrivateNATS(t)
			}
			b := newBfJob(t, kind, cluster)
			for i := range 60 {
				b.add(t, fmt.Sprintf("in/obj-%05d.ndjson", i), 20)
			}
			stop := b.produce(t, 20*time.Millisecond, 60)
			time.Sleep(100 * time.Millisecond)
			// No source object can be read until one worker has stopped: the first to stop
			// must be the one told its node id is in use, since neither can finish (nor start
			// after the other finished), however slowly the machine starts them.
			hold := filepath.Join(t.TempDir(), "go")
			ws := []*bfProc{b.start(t, "w1", "WHARF_TEST_BACKFILL_HOLD="+hold), b.start(t, "w1", "WHARF_TEST_BACKFILL_HOLD="+hold)}
			if err := b.waitPlanned(time.Minute); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond) // objects are added while the plan is made, and after
			stop()
			select {
			case <-ws[0].done:
			case <-ws[1].done:
			case <-time.After(time.Minute):
				t.Fatalf("neither worker stopped within a minute though both have node id w1:\n%s\n%s", ws[0].err.String(), ws[1].err.String())
			}
			if err := os.WriteFile(hold, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			var ok, told []*bfProc
			for _, w := range ws {
				w.wait(t, 2*time.Minute)
				switch {
				case w.code == 0:
					ok = append(ok, w)
				case w.nodeInUse():
					told = append(told, w)
				default:
					t.Errorf("a worker exited %d:\n%s", w.code, w.err.String())
				}
			}
			if len(ok) != 1 || len(told) != 1 {
				t.Errorf("%d workers succeeded and %d were told their node id is in use, want one each:\n%s\n%s", len(ok), len(told), ws[0].err.String(), ws[1].err.String())
			}
			if err := b.certified(t, ok); err != nil {
				t.Fatal(err)
			}
		})
	}
}
