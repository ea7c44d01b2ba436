package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/ship"
)

// shipService is `wharf ship` running in the background with its HTTP endpoints on a free
// loopback port.
type shipService struct {
	t    *testing.T
	cmd  *exec.Cmd
	port int
	out  *testenv.SyncBuffer
	err  *testenv.SyncBuffer
	done chan struct{}
}

// startShip starts `wharf ARGS… --listen 127.0.0.1:PORT` with c's environment; the process is
// killed (by its PID) if the test ends with it still running.
func startShip(t *testing.T, c cli, args ...string) *shipService {
	t.Helper()
	port := testenv.FreeLoopbackPort(t)
	cmd := c.command(append(args, "--listen", fmt.Sprintf("127.0.0.1:%d", port))...)
	s := &shipService{t: t, cmd: cmd, port: port, out: &testenv.SyncBuffer{}, err: &testenv.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.out, s.err
	must(t, cmd.Start())
	go func() { _ = cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

// get fetches path from the service: the status code and body, or an error while it does not
// answer.
func (s *shipService) get(path string) (int, string, error) {
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d%s", s.port, path))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// status returns /status, decoded; ok is false while the service does not answer.
func (s *shipService) status() (ship.Status, bool) {
	_, body, err := s.get("/status")
	var st ship.Status
	if err != nil || json.Unmarshal([]byte(body), &st) != nil {
		return st, false
	}
	return st, true
}

// waitFor polls /status until cond holds (30 s at most), failing the test with the last
// status and the service's stderr otherwise.
func (s *shipService) waitFor(what string, cond func(ship.Status) bool) ship.Status {
	s.t.Helper()
	var last ship.Status
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if s.hasExited() {
			s.t.Fatalf("waiting for %s: wharf ship exited (%d)\nlast of stderr: %s", what, s.cmd.ProcessState.ExitCode(), lastLines(s.err.String(), 10))
		}
		if st, ok := s.status(); ok {
			last = st
			if cond(st) {
				return st
			}
		}
	}
	b, _ := json.MarshalIndent(last, "", "  ")
	s.t.Fatalf("waiting for %s: timed out; last /status:\n%s\nlast of stderr: %s", what, b, lastLines(s.err.String(), 10))
	return last
}

func (s *shipService) hasExited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits for the exit (30 s at most); it returns the exit code.
func (s *shipService) stop() int {
	s.t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	return s.wait()
}

// wait waits for the process to exit on its own (60 s at most) and returns its exit code.
func (s *shipService) wait() int {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		s.t.Fatalf("wharf ship did not exit within 60 s\nlast of stderr: %s", lastLines(s.err.String(), 10))
	}
	return s.cmd.ProcessState.ExitCode()
}

// tmpfs mounts a tmpfs of the given size (mount's syntax: 8m) on a fresh directory and
// unmounts it when the test ends: a real small file system to fill, for the full-disk cases.
func tmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the full-disk tests mount a tmpfs, which needs root (the test servers' machine runs them as root)")
	}
	dir := filepath.Join(t.TempDir(), "tmpfs")
	must(t, os.Mkdir(dir, 0o755))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount -t tmpfs -o size=%s tmpfs %s: %v: %s", size, dir, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fill writes zeros into a file in dir until its file system has no space left, and returns
// the file's path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	must(t, err)
	defer f.Close()
	for _, chunk := range []int{1 << 20, 4 << 10, 1} {
		buf := make([]byte, chunk)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("filling %s: %v", dir, err)
				}
				break
			}
		}
	}
	var st syscall.Statfs_t
	must(t, syscall.Statfs(dir, &st))
	if st.Bavail != 0 {
		t.Fatalf("%s still has %d free blocks after filling it", dir, st.Bavail)
	}
	return path
}

// copyTree copies the regular files and directories under src to dst with plain writes (no
// hard links, no preallocation kept).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	must(t, err)
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
