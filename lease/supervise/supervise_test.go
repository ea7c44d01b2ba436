//go:build unix

package supervise

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/lease"
)

// The test binary is its own watcher, as wharf is: started with the argument watch-group, it
// runs Watch.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == "watch-group" {
		if err := Watch(os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if errors.Is(err, ErrUsage) {
				os.Exit(2)
			}
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// leaser is a Leaser over kv (a fresh memory store when nil) for node.
func leaser(t *testing.T, kv cas.Store, node string, renewEvery time.Duration) *lease.Leaser {
	t.Helper()
	if kv == nil {
		kv = cas.NewMemory()
	}
	cfg := lease.DefaultConfig()
	cfg.Node, cfg.TTL, cfg.Skew, cfg.RenewEvery = node, 3*time.Second, time.Second, renewEvery
	l, err := lease.OpenCAS(kv, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func options(out *bytes.Buffer) Options {
	return Options{Grace: 5 * time.Second, Stdout: out, Stderr: out, Watcher: []string{"watch-group"}}
}

// released reports whether the lease name is released in l's records.
func released(t *testing.T, l *lease.Leaser, name string) bool {
	t.Helper()
	rec, _, found, err := l.Log(name).Lease(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return found && rec.Released
}

// The command finds the fence and the name in its environment; its status is Run's, and the
// lease is released once it has ended.
func TestRunPassesFenceAndStatus(t *testing.T) {
	l := leaser(t, nil, "host-a", 0)
	var out bytes.Buffer
	err := Run(context.Background(), l, "job", []string{"sh", "-c", `echo "$WHARF_LEASE_FENCE $WHARF_LEASE_NAME"; exit 3`}, options(&out))
	var ee *ExitError
	if !errors.As(err, &ee) || ee.ExitStatus() != 3 || err.Error() != "lease run: sh exited with status 3" {
		t.Fatalf("Run = %v, want status 3", err)
	}
	if got := out.String(); got != "1 job\n" {
		t.Errorf("the command printed %q, want the fence and the name", got)
	}
	if !released(t, l, "job") {
		t.Error("the lease is not released")
	}
	if err := Run(context.Background(), l, "job", []string{"sh", "-c", "kill -TERM $$"}, options(&out)); !errors.As(err, &ee) || ee.Status != 128+int(syscall.SIGTERM) {
		t.Errorf("a command killed by SIGTERM: Run = %v, want status 143", err)
	}
}

// A command that cannot be started is ErrUsage, and the lease is released.
func TestRunCommandNotFound(t *testing.T) {
	l := leaser(t, nil, "host-a", 0)
	var out bytes.Buffer
	err := Run(context.Background(), l, "job", []string{"/nonexistent/command"}, options(&out))
	if !errors.Is(err, ErrUsage) || !strings.HasPrefix(err.Error(), "lease run: ") {
		t.Fatalf("Run = %v, want ErrUsage", err)
	}
	if !released(t, l, "job") {
		t.Error("the lease is not released")
	}
}

// What the command left running in its process group is gone when Run returns.
func TestRunStopsWhatTheCommandLeftRunning(t *testing.T) {
	l := leaser(t, nil, "host-a", 0)
	var out bytes.Buffer
	if err := Run(context.Background(), l, "job", []string{"sh", "-c", `sleep 1000 >/dev/null 2>&1 & echo $!`}, options(&out)); err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("the command printed %q", out.String())
	}
	for start := time.Now(); syscall.Kill(pid, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if p, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); strings.Contains(string(p), ") Z ") {
			break // killed, not yet reaped
		}
		if time.Since(start) > 5*time.Second {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the command's sleep (pid %d) still runs after Run returned", pid)
		}
	}
}

// A lease released by name while the command runs stops the command (SIGTERM first), and Run
// fails with the lease's error.
func TestRunLostLeaseStopsTheCommand(t *testing.T) {
	kv := cas.NewMemory()
	l, byName := leaser(t, kv, "host-a", 100*time.Millisecond), leaser(t, kv, "host-a", 0)
	out := &testenv.SyncBuffer{}
	ctx := context.Background()
	go func() {
		for !strings.Contains(out.String(), "started") {
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := byName.Release(ctx, "job", 1); err != nil {
			t.Error(err)
		}
	}()
	o := Options{Grace: 5 * time.Second, Stdout: out, Stderr: out, Watcher: []string{"watch-group"}}
	err := Run(ctx, l, "job", []string{"sh", "-c", `trap 'echo got-term; exit 0' TERM; echo started; while :; do sleep 0.05; done`}, o)
	if !errors.Is(err, lease.ErrNotHeld) || !strings.Contains(err.Error(), "lease run: the lease was lost while sh ran: stopped it") {
		t.Fatalf("Run = %v, want the lease lost", err)
	}
	if !strings.Contains(out.String(), "got-term") {
		t.Errorf("the command printed %q: it was not sent SIGTERM", out.String())
	}
}

// Watch started other than by Run (not a process group leader) is ErrUsage.
func TestWatchRefusesToRunByHand(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "watch-group")
	b, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(b), "not a process group leader") {
		t.Fatalf("watch-group by hand: %v, %q", err, b)
	}
}
