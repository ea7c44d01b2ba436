package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store"
)

// leasedExport is one export with state: bucket on a fresh MinIO bucket, run from "machines"
// that share nothing but the bucket: each has its own working directory, config file and
// node id, and no state file.
type leasedExport struct {
	t      *testing.T
	bucket string
	s      *store.Store // the bucket, to look at
	src    string
	srv    testenv.S3Server
	// firstRun is the run id of the first part hasPart saw.
	firstRun string
}

func newLeasedExport(t *testing.T) *leasedExport {
	t.Helper()
	srv := testenv.MinIO(t)
	x := &leasedExport{t: t, bucket: randomBucket(t), src: t.TempDir() + "/demo.db", srv: srv}
	ctx := context.Background()
	s, err := store.Open(ctx, "s3://"+x.bucket, srv.StoreConfig(t))
	must(t, err)
	t.Cleanup(func() { s.Close() })
	must(t, s.MakeBucket(ctx))
	must(t, export.CreateDemo(ctx, x.src, crashRows))
	x.s = s
	return x
}

// machine writes a machine's config (TTL 3 s, skew 500 ms, renewal every second, and wait)
// into a directory of its own and returns the command that runs wharf there as node.
func (x *leasedExport) machine(node string, wait time.Duration, env ...string) func(args ...string) *exec.Cmd {
	t := x.t
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"wharf.yaml": x.config(wait, "", "orders/")})
	c := cli{dir: dir, env: append([]string{"WHARF_NODE_ID=" + node}, env...)}
	return func(args ...string) *exec.Cmd { return c.command(append([]string{"-c", "wharf.yaml"}, args...)...) }
}

// config is the export's config file: state: bucket with the lease above, the demo table
// into s3://BUCKET/dest with the keys more adds (each an indented "    key: value" line).
func (x *leasedExport) config(wait time.Duration, more, dest string) string {
	ak, sk := x.srv.Refs(x.t)
	return fmt.Sprintf(`state: bucket
lease:
  ttl: 3s
  skew: 500ms
  renew_every: 1s
  wait: %s
exports:
  - name: orders
    source: sqlite://%s
    table: orders
    chunk_key: id
    chunk_rows: %d
%s    destination: s3://%s/%s
    store:
      endpoint: %s
      region: %s
      access_key_id: %s
      secret_access_key: %s
`, wait, x.src, crashRows/4, more, x.bucket, dest, x.srv.Endpoint, x.srv.Region, ak, sk)
}

type proc struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
}

func start(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{cmd: cmd}
	cmd.Stdout, cmd.Stderr = &p.out, &p.err
	must(t, cmd.Start())
	return p
}

func (p *proc) wait() int {
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// validate runs wharf validate on the export's prefix and returns the result.
func (x *leasedExport) validate() result {
	c, ep := minioCLI(x.t)
	return c.run(x.t, append(ep, "validate", "--format", "json", "s3://"+x.bucket+"/orders/")...)
}

// pollUntil polls until cond holds, for at most d.
func pollUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %s", what, d)
		}
	}
}

func (x *leasedExport) pointer() lease.Pointer {
	p, _, err := lease.OpenLog(x.s.Sub("orders"), "orders").Pointer(context.Background())
	must(x.t, err)
	return p
}

// hasPart reports whether a part is at the prefix, and notes the run id of the first.
func (x *leasedExport) hasPart() bool {
	objs, err := x.s.ListAll(context.Background(), "orders/part-")
	if err != nil || len(objs) == 0 {
		return false
	}
	x.firstRun = strings.Join(strings.SplitN(strings.TrimPrefix(objs[0].Key, "orders/part-"), "-", 3)[:2], "-")
	return true
}

// parts counts the parts of run runID at the prefix.
func (x *leasedExport) parts(runID string) int {
	objs, err := x.s.ListAll(context.Background(), "orders/part-"+runID+"-")
	must(x.t, err)
	return len(objs)
}

// Two `wharf export` processes started at once for one export, on two machines: one run,
// and one exit 75 naming the holder.
func TestE2EExportLeaseTwoAtOnce(t *testing.T) {
	x := newLeasedExport(t)
	slow := envTestPause + "=after-part:800ms" // the winner holds the lease ~3 s: the other starts well within it
	a := start(t, x.machine("host-a", 0, slow)("export"))
	b := start(t, x.machine("host-b", 0, slow)("export"))
	ca, cb := a.wait(), b.wait()
	if ca+cb != errcode.ExitHeld {
		t.Fatalf("exits %d and %d, want 0 and 75\na: %s\nb: %s", ca, cb, a.err.String(), b.err.String())
	}
	loser, winner := a, "host-b"
	if ca == 0 {
		loser, winner = b, "host-a"
	}
	if msg := loser.err.String(); !strings.Contains(msg, "skipped: lease \"orders\" held by node "+winner+" (fence 1) until ") ||
		!strings.Contains(msg, "[WHARF_LEASE_HELD]") {
		t.Errorf("the skipped run said %q", msg)
	}
	r := x.validate().must(t, 0)
	var v dataset.Validation
	must(t, json.Unmarshal([]byte(r.out), &v))
	if !v.Certified || v.Manifest != nil {
		t.Errorf("validation %s", r.out)
	}
	m := readManifest(t, x.s, "orders/")
	if m.Log == nil || m.Log.Fence != 1 || m.Log.Seq != 1 || m.Log.Name != "orders" {
		t.Errorf("manifest log %+v, want fence 1 seq 1", m.Log)
	}
	runs := x.machine("host-c", 0)("runs", "--format", "json")
	out, err := runs.Output()
	must(t, err)
	if n := strings.Count(string(out), `"status":"succeeded"`); n != 1 || strings.Count(string(out), "\n") != 1 {
		t.Errorf("runs read from the log: %s", out)
	}
}

// A holder paused (SIGSTOP) past its TTL, while another node takes over and finishes, is
// fenced when it resumes (SIGCONT): it fails WHARF_LEASE_FENCED and certifies nothing; the
// prefix stays certified as the other node left it.
func TestE2EExportLeasePausedHolderIsFenced(t *testing.T) {
	x := newLeasedExport(t)
	a := start(t, x.machine("host-a", 0, envTestPause+"=after-part:700ms")("export"))
	pollUntil(t, 10*time.Second, "host-a's first part", x.hasPart)
	must(t, a.cmd.Process.Signal(syscall.SIGSTOP))
	b := start(t, x.machine("host-b", 10*time.Second)("export", "--resume"))
	if code := b.wait(); code != 0 {
		_ = a.cmd.Process.Signal(syscall.SIGCONT)
		t.Fatalf("host-b: exit %d\n%s", code, b.err.String())
	}
	aParts := x.parts(x.firstRun)
	must(t, a.cmd.Process.Signal(syscall.SIGCONT))
	if code := a.wait(); code != 1 || !strings.Contains(a.err.String(), "WHARF_LEASE_FENCED") {
		t.Fatalf("host-a after SIGCONT: exit %d, %s", code, a.err.String())
	}
	if after := x.parts(x.firstRun); after != aParts {
		t.Errorf("host-a wrote %d more parts after it was fenced", after-aParts)
	}
	r := x.validate().must(t, 0)
	m := readManifest(t, x.s, "orders/")
	if m.Log == nil || m.Log.Fence != 2 {
		t.Errorf("the manifest is logged under %+v, want host-b's fence 2\n%s", m.Log, r.out)
	}
	if p := x.pointer(); p.Fence != 2 {
		t.Errorf("pointer %+v", p)
	}
}

// SIGKILL between a commit's log entry and its pointer advance: the entry stays unreadable,
// and another machine, once the lease expires, runs the export from the bucket's state.
func TestE2EExportLeaseKilledMidCommit(t *testing.T) {
	x := newLeasedExport(t)
	a := start(t, x.machine("host-a", 0, "WHARF_TEST_LEASE=kill-after-entry:1")("export"))
	if code := a.wait(); code != -1 {
		t.Fatalf("host-a: exit %d, want killed\n%s", code, a.err.String())
	}
	entries, err := x.s.Sub("orders").ListAll(context.Background(), lease.LogPrefix)
	must(t, err)
	if len(entries) != 1 || x.pointer().Seq != 0 {
		t.Fatalf("after the kill: %d entries, pointer %+v; want one entry the pointer does not name", len(entries), x.pointer())
	}
	if _, err := x.s.Head(context.Background(), "orders/"+dataset.ManifestKey); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("a manifest was written before its commit: %v", err)
	}
	b := start(t, x.machine("host-b", 10*time.Second)("export", "--resume"))
	if code := b.wait(); code != 0 {
		t.Fatalf("host-b: exit %d\n%s", code, b.err.String())
	}
	x.validate().must(t, 0)
	var logged []string
	for e, err := range lease.OpenLog(x.s.Sub("orders"), "orders").Walk(context.Background(), "") {
		must(t, err)
		logged = append(logged, e.Key)
	}
	if len(logged) != 1 || logged[0] != lease.EntryKey("orders", 1, 2) {
		t.Errorf("the log reads %v, want only host-b's entry (seq 1, fence 2)", logged)
	}
}

// --resume after a crash, from another machine: the progress committed to the log is kept.
func TestE2EExportLeaseResumeFromAnotherMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a checkpoint (10 s)")
	}
	x := newLeasedExport(t)
	a := start(t, x.machine("host-a", 0, envTestPause+"=after-part:3500ms")("export"))
	pollUntil(t, 30*time.Second, "a checkpoint in the log", func() bool { return x.pointer().Seq >= 1 })
	must(t, a.cmd.Process.Kill())
	a.wait()
	b := start(t, x.machine("host-b", 10*time.Second)("export", "--resume", "--format", "json"))
	if code := b.wait(); code != 0 {
		t.Fatalf("host-b: exit %d\n%s", code, b.err.String())
	}
	var res export.Result
	must(t, json.Unmarshal(b.out.Bytes(), &res))
	if !res.Resumed || len(res.Skipped) < 2 {
		t.Errorf("host-b resumed %v, kept %d parts: want the run host-a checkpointed, its parts kept", res.Resumed, len(res.Skipped))
	}
	x.validate().must(t, 0)
}
