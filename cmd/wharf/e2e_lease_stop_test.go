package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wharfdata/wharf/errcode"
)

// A `wharf lease run` that is stopped (SIGSTOP, or ^Z in a terminal: the command is in the
// watcher's process group, not the terminal's) cannot renew, but its command would run on:
// the watcher stops the command by the holder's deadline plus the grace wharf itself gives,
// so a contender that takes the lease over never runs beside it.
func TestE2ELeaseRunStoppedSupervisorStopsItsCommand(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "locks")
	if err := os.Mkdir(store, 0o777); err != nil {
		t.Fatal(err)
	}
	holder := cli{env: []string{"WHARF_NODE_ID=host-a"}, dir: dir}.command("lease", "run", "job", "--store", store,
		"--ttl", "3s", "--skew", "1s", "--renew-every", "500ms", "--", "sh", "-c", `echo $$ > child.pid; while :; do sleep 0.05; done`)
	var errb bytes.Buffer
	holder.Stderr = &errb
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	child := readPID(t, filepath.Join(dir, "child.pid"))
	t.Cleanup(func() {
		_ = holder.Process.Signal(syscall.SIGCONT)
		_ = holder.Process.Kill()
		_ = holder.Wait()
		if alivePID(child) {
			_ = syscall.Kill(child, syscall.SIGKILL)
		}
	})
	time.Sleep(1200 * time.Millisecond) // renewals land
	if err := holder.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stoppedAt := time.Now()
	contender := make(chan result, 1)
	go func() {
		contender <- cli{env: []string{"WHARF_NODE_ID=host-b"}, dir: dir}.run(t, "lease", "run", "job", "--store", store,
			"--ttl", "3s", "--skew", "1s", "--wait", "30s", "--", "sh", "-c", `echo "began $(date +%s%N)"`)
	}()
	var gone time.Time
	for alivePID(child) {
		if time.Since(stoppedAt) > 10*time.Second {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !alivePID(child) {
		gone = time.Now()
	}
	r := <-contender
	r.must(t, 0)
	began, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(r.out), "began "), 10, 64)
	if err != nil {
		t.Fatalf("the contender printed %q", r.out)
	}
	if gone.IsZero() {
		t.Fatalf("the stopped holder's command still runs %s after wharf was stopped (the contender's began %s after)",
			time.Since(stoppedAt).Round(time.Millisecond), time.Unix(0, began).Sub(stoppedAt).Round(time.Millisecond))
	}
	t.Logf("wharf stopped at 0: its command gone at %s, the contender's began at %s",
		gone.Sub(stoppedAt).Round(time.Millisecond), time.Unix(0, began).Sub(stoppedAt).Round(time.Millisecond))
	if !time.Unix(0, began).After(gone) {
		t.Errorf("the contender's command began before the stopped holder's was gone: both ran at once")
	}
	_ = holder.Process.Signal(syscall.SIGCONT)
	err = holder.Wait()
	if err == nil || !strings.Contains(errb.String(), "WHARF_LEASE_NOT_HELD") {
		t.Errorf("the resumed holder: %v\n%s", err, errb.String())
	}
}

// The lease record keeps its TTL in whole milliseconds: a TTL below one used to be written
// as ttl_ms 0, a record no wharf reads again (show, acquire, renew and release all failed on
// it, for good). It is refused before anything is written.
func TestE2ELeaseTTLBelowAMillisecondIsRefused(t *testing.T) {
	dir := t.TempDir()
	c := cli{env: []string{"WHARF_NODE_ID=host-a"}}
	r := c.run(t, "lease", "acquire", "job", "--store", dir, "--ttl", "900us", "--skew", "0").must(t, errcode.ExitUsage)
	if !strings.Contains(r.err, "lease.ttl") {
		t.Errorf("said %q", r.err)
	}
	if _, err := os.Stat(filepath.Join(dir, "_wharf", "leases", "job.json")); err == nil {
		t.Errorf("a lease record was written")
	}
	c.run(t, "lease", "acquire", "job", "--store", dir, "--ttl", "1500us", "--skew", "0", "--renew-every", "200us").must(t, 0)
	c.run(t, "lease", "show", "job", "--store", dir).must(t, 0)
}
