package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store/probe"
)

// alivePID reports whether pid runs (a zombie, waiting for a parent to reap it, counts as
// gone).
func alivePID(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil // no /proc: ask the kernel
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// readPID waits for the command to write its pid to path.
func readPID(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pid
			}
		}
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// SIGKILL of `wharf lease run` alone (not its group) stops its command and what the command
// started (a grandchild), within a few seconds: nothing runs on unleased.
func TestE2ELeaseRunKilledSupervisorLeavesNothingRunning(t *testing.T) {
	dir := t.TempDir()
	script := `echo $$ > child.pid; sleep 1000 & echo $! > grandchild.pid; wait`
	cmd := cli{env: []string{"WHARF_NODE_ID=host-a"}, dir: dir}.command("lease", "run", "job", "--store", dir, "--", "sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child, grandchild := readPID(t, filepath.Join(dir, "child.pid")), readPID(t, filepath.Join(dir, "grandchild.pid"))
	t.Cleanup(func() { // leave nothing behind, whatever happened
		for _, pid := range []int{child, grandchild} {
			if alivePID(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()
	for alivePID(child) || alivePID(grandchild) {
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("10 s after wharf was killed: the command runs %v, its grandchild %v", alivePID(child), alivePID(grandchild))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("command and grandchild gone %s after wharf was killed", time.Since(killed).Round(time.Millisecond))
}

// When the command ends, what it left running in its process group is stopped before the
// lease is released.
func TestE2ELeaseRunEndStopsWhatTheCommandLeftRunning(t *testing.T) {
	dir := t.TempDir()
	c := cli{env: []string{"WHARF_NODE_ID=host-a"}, dir: dir}
	c.run(t, "lease", "run", "job", "--store", dir, "--", "sh", "-c", `sleep 1000 >/dev/null 2>&1 & echo $! > straggler.pid`).must(t, 0)
	pid := readPID(t, filepath.Join(dir, "straggler.pid"))
	for start := time.Now(); alivePID(pid); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("the command's background process outlived the run")
		}
	}
}

// A holder cut off from the store (every request to it hangs) stops its command by its own
// deadline, before a contender can take the lease over: the two commands never run at once.
func TestE2ELeaseRunCutOffFromTheStoreStopsByItsDeadline(t *testing.T) {
	srv := testenv.MinIO(t)
	p, psrv := testenv.FaultProxy(t, srv)
	url, w := leaseCLI(t) // the bucket, and runs straight to MinIO
	c, _ := minioCLI(t)
	c.env = append(c.env, "WHARF_NODE_ID=host-a")
	holder := c.command("--endpoint", psrv.Endpoint, "lease", "run", "job", "--store", url, "--ttl", "6s", "--skew", "1s",
		"--renew-every", "1s", "--grace", "30s", "--", "sh", "-c", `trap 'echo "stopped $(date +%s%N)"; exit 0' TERM; echo started; while :; do sleep 0.05; done`)
	var errb bytes.Buffer
	holder.Stderr = &errb
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "started" {
		t.Fatalf("the holder's command did not start: %q %s", lines.Text(), errb.String())
	}
	time.Sleep(2500 * time.Millisecond) // renewals land
	p.Inject(faultproxy.Rule{Fault: faultproxy.Stall, Delay: 5 * time.Minute})
	cut := time.Now()
	contender := make(chan result, 1)
	go func() {
		contender <- w("host-b", "lease", "run", "job", "--store", url, "--ttl", "6s", "--skew", "1s", "--wait", "1m",
			"--", "sh", "-c", `echo "began $(date +%s%N)"`)
	}()
	var stopped int64
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "stopped "); ok {
			stopped, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if stopped == 0 {
		t.Fatalf("the holder's command was never stopped\n%s", errb.String())
	}
	r := <-contender
	r.must(t, 0)
	began, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(r.out), "began "), 10, 64)
	if err != nil {
		t.Fatalf("the contender printed %q", r.out)
	}
	t.Logf("cut off at 0: holder's command stopped at %s, contender's began at %s",
		time.Unix(0, stopped).Sub(cut).Round(time.Millisecond), time.Unix(0, began).Sub(cut).Round(time.Millisecond))
	if began <= stopped {
		t.Errorf("the contender's command began %s before the holder's stopped: both ran at once", time.Duration(stopped-began))
	}
	_ = holder.Wait()
	if !strings.Contains(errb.String(), "WHARF_LEASE_NOT_HELD") || !strings.Contains(errb.String(), "deadline") {
		t.Errorf("the holder said %s", errb.String())
	}
}

// A TTL is bounded (7 days): one that would overflow the sums a contender makes is refused
// before anything is written.
func TestE2ELeaseTTLIsBounded(t *testing.T) {
	dir := t.TempDir()
	c := cli{env: []string{"WHARF_NODE_ID=host-a"}}
	r := c.run(t, "lease", "acquire", "job", "--store", dir, "--ttl", "2562047h46m47s").must(t, errcode.ExitUsage)
	if !strings.Contains(r.err, "at most 168h0m0s") {
		t.Errorf("said %q", r.err)
	}
	c.run(t, "lease", "run", "job", "--store", dir, "--ttl", "169h", "--", "true").must(t, errcode.ExitUsage)
	c.run(t, "lease", "run", "job", "--store", dir, "--ttl", "168h", "--", "true").must(t, 0)
}

// A store proven cas, whose verdict is remembered, that starts ignoring conditions (a proxy
// now strips them) is refused within lease.CheckEvery runs, WHARF_COORDINATION_UNPROVEN, and
// its remembered verdict is forgotten: the next run probes it and refuses it too.
func TestE2ELeaseStoreThatStopsEnforcingConditionsIsRefused(t *testing.T) {
	srv := testenv.MinIO(t)
	p, psrv := testenv.FaultProxy(t, srv)
	url, _ := leaseCLI(t)
	c, _ := minioCLI(t)
	cache := t.TempDir()
	c.env = append(c.env, "WHARF_NODE_ID=host-a", "XDG_CACHE_HOME="+cache)
	run := func() result {
		return c.run(t, "--endpoint", psrv.Endpoint, "lease", "run", "job", "--store", url, "--", "true")
	}
	run().must(t, 0) // probed, and remembered cas
	p.StripConditions(true)
	refused := 0
	for i := 1; i <= lease.CheckEvery && refused == 0; i++ {
		r := run()
		switch {
		case r.code == 0:
		case strings.Contains(r.err, "WHARF_COORDINATION_UNPROVEN") && strings.Contains(r.err, "no longer enforces"):
			refused = i
		default:
			t.Fatalf("run %d after the proxy began stripping conditions: exit %d: %s", i, r.code, r.err)
		}
	}
	if refused == 0 {
		t.Fatalf("%d runs after the proxy began stripping conditions, none was refused", lease.CheckEvery)
	}
	t.Logf("refused by run %d after the store stopped enforcing conditions", refused)
	v := &probe.Verdicts{Path: filepath.Join(cache, "wharf", "probes.json")}
	var all map[string]probe.Verdict
	b, _ := os.ReadFile(v.Path)
	_ = json.Unmarshal(b, &all)
	for k, e := range all {
		if strings.Contains(k, psrv.Endpoint) && e.Coordination == probe.CAS {
			t.Errorf("the cas verdict of %s is still remembered: %+v", k, e)
		}
	}
	r := run().must(t, 1)
	if !strings.Contains(r.err, "WHARF_COORDINATION_UNPROVEN") {
		t.Errorf("the next run: %s", r.err)
	}
}

// `wharf lease renew` for the node of a running `lease run` does not stop it: the run adopts
// the renewal and its command finishes.
func TestE2ELeaseRenewByNameDoesNotStopTheRun(t *testing.T) {
	url, w := leaseCLI(t)
	c, ep := minioCLI(t)
	c.env = append(c.env, "WHARF_NODE_ID=host-a")
	holder := c.command(append(ep, "lease", "run", "job", "--store", url, "--ttl", "3s", "--skew", "500ms",
		"--renew-every", "300ms", "--", "sh", "-c", `echo started; sleep 2; echo finished`)...)
	var errb bytes.Buffer
	holder.Stderr = &errb
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "started" {
		t.Fatalf("the command did not start: %q %s", lines.Text(), errb.String())
	}
	w("host-a", "lease", "renew", "job", "--store", url).must(t, 0)
	rest, _ := io.ReadAll(out)
	err = holder.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) || strings.TrimSpace(string(rest)) != "finished" {
		t.Fatalf("after a renewal by name: %v, the command printed %q\n%s", err, rest, errb.String())
	}
}
