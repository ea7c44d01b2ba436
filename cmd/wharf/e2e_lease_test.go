package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store"
)

// leaseCLI is a MinIO bucket for lease tests: the store URL, and a run of wharf under node.
func leaseCLI(t *testing.T) (url string, w func(node string, args ...string) result) {
	t.Helper()
	c, ep := minioCLI(t)
	bucket := "s3://" + randomBucket(t)
	c.run(t, append(ep, "mb", bucket)...).must(t, 0)
	url = bucket + "/locks"
	return url, func(node string, args ...string) result {
		t.Helper()
		cc := c
		cc.env = append(append([]string(nil), c.env...), "WHARF_NODE_ID="+node)
		return cc.run(t, append(ep, args...)...)
	}
}

func TestE2ELeaseAcquireHeldRenewRelease(t *testing.T) {
	url, w := leaseCLI(t)
	var got leaseOutcome
	r := w("host-a", "lease", "acquire", "nightly", "--store", url, "--ttl", "1m", "--format", "json").must(t, 0)
	if err := json.Unmarshal([]byte(r.out), &got); err != nil || got.Fence != 1 || got.Node != "host-a" || got.Mode != lease.ModeBucket {
		t.Fatalf("acquire printed %q (%v)", r.out, err)
	}
	r = w("host-b", "lease", "acquire", "nightly", "--store", url).must(t, errcode.ExitHeld)
	if !strings.Contains(r.err, "held by node host-a") || !strings.Contains(r.err, "[WHARF_LEASE_HELD]") {
		t.Errorf("held said %q", r.err)
	}
	w("host-b", "lease", "renew", "nightly", "--store", url).must(t, 1)
	w("host-b", "lease", "release", "nightly", "--store", url).must(t, 1)
	w("host-a", "lease", "renew", "nightly", "--store", url, "--fence", "2").must(t, 1)
	w("host-a", "lease", "renew", "nightly", "--store", url, "--fence", "1").must(t, 0)
	w("host-a", "lease", "release", "nightly", "--store", url, "--fence", "1").must(t, 0)
	r = w("host-b", "lease", "acquire", "nightly", "--store", url, "-q").must(t, 0)
	if strings.TrimSpace(r.out) != "2" {
		t.Errorf("second acquisition printed fence %q, want 2", r.out)
	}
	r = w("host-b", "lease", "show", "nightly", "--store", url, "--format", "json").must(t, 0)
	var st lease.State
	if err := json.Unmarshal([]byte(r.out), &st); err != nil || st.Lease.Holder != "host-b" || st.Pointer.Fence != 2 {
		t.Errorf("show printed %q (%v)", r.out, err)
	}
	r = w("local", "lease", "acquire", "other", "--store", url).must(t, errcode.ExitUsage)
	if !strings.Contains(r.err, "WHARF_NODE_ID") || !strings.Contains(r.err, "WHARF_LEASE_NODE_ID_LOCAL") {
		t.Errorf("node local said %q", r.err)
	}
}

func TestE2ELeaseRunPassesFenceAndStatus(t *testing.T) {
	dir := t.TempDir()
	c := cli{env: []string{"WHARF_NODE_ID=host-a"}}
	r := c.run(t, "lease", "run", "job", "--store", dir, "--", "sh", "-c", `echo "fence=$WHARF_LEASE_FENCE name=$WHARF_LEASE_NAME"; exit 3`).must(t, 3)
	if r.out != "fence=1 name=job\n" {
		t.Errorf("the command printed %q", r.out)
	}
	c.run(t, "lease", "run", "job", "--store", dir, "--", "true").must(t, 0)
	r = c.run(t, "lease", "show", "job", "--store", dir, "--format", "json").must(t, 0)
	if !strings.Contains(r.out, `"fence":2`) || !strings.Contains(r.out, `"released":true`) {
		t.Errorf("after two runs: %s", r.out)
	}
	c.run(t, "lease", "run", "job", "--store", dir, "--", "/nonexistent/command").must(t, errcode.ExitUsage)
}

// A `wharf lease run` whose lease is stolen stops its command (SIGTERM) and fails
// WHARF_LEASE_NOT_HELD.
func TestE2ELeaseRunStolenStopsCommand(t *testing.T) {
	rest, errs, took := runThenSteal(t, "5s", `trap 'echo got-term; kill $!; exit 7' TERM; echo started; sleep 60 & wait`)
	if strings.Join(rest, "\n") != "got-term" || !strings.Contains(errs, "WHARF_LEASE_NOT_HELD") {
		t.Errorf("after the theft: stdout %q, stderr %s", rest, errs)
	}
	if took > 3*time.Second {
		t.Errorf("the command was stopped %s after the theft, want within a renewal or two", took)
	}
}

// A command that ignores SIGTERM is killed once --grace has passed.
func TestE2ELeaseRunStolenKillsAfterGrace(t *testing.T) {
	rest, errs, took := runThenSteal(t, "1s", `trap 'echo ignored-term' TERM; echo started; while :; do sleep 0.1; done`)
	if strings.Join(rest, "\n") != "ignored-term" || !strings.Contains(errs, "WHARF_LEASE_NOT_HELD") {
		t.Errorf("after the theft: stdout %q, stderr %s", rest, errs)
	}
	if took < time.Second || took > 5*time.Second {
		t.Errorf("the command was killed %s after the theft, want the 1 s grace after a renewal", took)
	}
}

// runThenSteal runs `wharf lease run` (renewing every 300 ms, with grace) of sh -c script,
// which must print "started" first; steals the lease; and returns what the command printed
// after that, wharf's stderr, and how long after the theft wharf exited (it must exit 1).
func runThenSteal(t *testing.T, grace, script string) ([]string, string, time.Duration) {
	t.Helper()
	url, _ := leaseCLI(t)
	c, ep := minioCLI(t)
	c.env = append(c.env, "WHARF_NODE_ID=host-a")
	cmd := c.command(append(ep, "lease", "run", "job", "--store", url, "--ttl", "3s", "--skew", "500ms",
		"--renew-every", "300ms", "--grace", grace, "--", "sh", "-c", script)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "started" {
		t.Fatalf("the command did not start: %q %s", lines.Text(), errb.String())
	}
	steal(t, url, "job")
	start := time.Now()
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	err = cmd.Wait()
	took := time.Since(start)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("wharf: %v, want exit 1\n%s", err, errb.String())
	}
	return rest, errb.String(), took
}

// steal overwrites the lease object as another node that took it over would.
func steal(t *testing.T, url, name string) {
	t.Helper()
	srv := testenv.MinIO(t)
	s, err := store.Open(context.Background(), url, srv.StoreConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, _ := json.Marshal(lease.Record{Name: name, Holder: "thief", Fence: 99, TTLMillis: 60000})
	if _, err := s.Put(context.Background(), lease.LeaseKey(name), bytes.NewReader(b), &store.PutOptions{Size: int64(len(b))}); err != nil {
		t.Fatal(err)
	}
}
