package testenv

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// NATSCluster is the three-node NATS JetStream cluster on loopback that scripts/test.sh
// started (WHARF_TEST_NATS_URLS, WHARF_TEST_NATS_DIR). Each node's directory holds its pid
// and the arguments it was started with, so a test can kill one node by its PID and start it
// again the same way.
type NATSCluster struct {
	URLs []string // each node's client URL, nats://127.0.0.1:PORT
	dir  string
}

// NATS returns the cluster, or fails/skips t (see Missing).
func NATS(t testing.TB) NATSCluster {
	t.Helper()
	urls, dir := os.Getenv("WHARF_TEST_NATS_URLS"), os.Getenv("WHARF_TEST_NATS_DIR")
	if urls == "" || dir == "" {
		Missing(t, "nats-server")
	}
	return NATSCluster{URLs: strings.Split(urls, ","), dir: dir}
}

// URL is every node's URL, comma-separated (what a client is given).
func (c NATSCluster) URL() string { return strings.Join(c.URLs, ",") }

func (c NATSCluster) node(i int) string { return filepath.Join(c.dir, fmt.Sprintf("n%d", i)) }

// KillNode SIGKILLs node i by its recorded PID and returns a function that starts it again
// with the same arguments and waits until it is ready; the function also runs when t ends,
// if the test did not call it, so the next test finds the whole cluster. Kills are
// serialized across test processes by a lock in the cluster's directory, so that two
// packages' tests never take two nodes (the quorum) down at once.
func (c NATSCluster) KillNode(t testing.TB, i int) (restart func()) {
	t.Helper()
	lock, err := os.OpenFile(filepath.Join(c.dir, "kill.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("testenv: nats lock: %v", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("testenv: nats lock: %v", err)
	}
	// A node killed while its cluster is still forming (a fresh meta group, a stream just
	// created and not yet on every peer) can leave the survivors without a JetStream leader
	// for minutes: kill only a cluster whose every node is healthy, assets included.
	for j := range 3 {
		if !c.waitHealthy(c.node(j), "", 30*time.Second) {
			t.Logf("testenv: nats node %d is not healthy 30s before a kill; killing node %d anyway", j, i)
		}
	}
	dir := c.node(i)
	pid := readPID(t, dir)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("testenv: kill nats node %d (pid %d): %v", i, pid, err)
	}
	for deadline := time.Now().Add(10 * time.Second); alive(pid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	done := false
	restart = func() {
		if done {
			return
		}
		done = true
		defer lock.Close()
		c.start(t, dir)
	}
	t.Cleanup(restart)
	return restart
}

func readPID(t testing.TB, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil {
		t.Fatalf("testenv: the nats node's pid in %s: %v %v", dir, err, perr)
	}
	return pid
}

// alive reports whether pid runs (a zombie counts as gone).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// start starts the node of dir again with its recorded binary and arguments, in a process
// group of its own (scripts/test.sh stops it by the PID written back), and waits for
// /healthz?js-enabled-only=true.
func (c NATSCluster) start(t testing.TB, dir string) {
	if !c.launch(t, dir) {
		return
	}
	// A node catching up with its cluster on a loaded machine (the whole suite on 2 cores)
	// can take tens of seconds to report JetStream ready.
	if !c.waitHealthy(dir, "?js-enabled-only=true", time.Minute) {
		t.Errorf("testenv: the nats node in %s is not ready a minute after its restart", dir)
	}
}

// launch starts the node of dir with its recorded binary and arguments, in a process group of
// its own, and records its PID; false (t has the error) when it cannot.
func (c NATSCluster) launch(t testing.TB, dir string) bool {
	bin, err1 := os.ReadFile(filepath.Join(dir, "bin"))
	args, err2 := os.ReadFile(filepath.Join(dir, "args"))
	if err1 != nil || err2 != nil {
		t.Errorf("testenv: start the nats node in %s: %v %v", dir, err1, err2)
		return false
	}
	argv := strings.Split(strings.TrimRight(string(args), "\n"), "\n")
	log, err := os.OpenFile(filepath.Join(dir, "log"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Errorf("testenv: %v", err)
		return false
	}
	defer log.Close()
	cmd := exec.Command(strings.TrimSpace(string(bin)), argv...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = log, log, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Errorf("testenv: start the nats node in %s: %v", dir, err)
		return false
	}
	_ = os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600)
	go func() { _ = cmd.Wait() }() // reap it if it exits while the test runs
	return true
}

// waitHealthy waits up to d for the /healthz (with query) of the node of dir to answer 200.
func (c NATSCluster) waitHealthy(dir, query string, d time.Duration) bool {
	args, err := os.ReadFile(filepath.Join(dir, "args"))
	if err != nil {
		return false
	}
	monitor := ""
	argv := strings.Split(strings.TrimRight(string(args), "\n"), "\n")
	for i, a := range argv {
		if a == "-m" && i+1 < len(argv) {
			monitor = argv[i+1]
		}
	}
	url := "http://127.0.0.1:" + monitor + "/healthz" + query
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// PrivateNATS starts a three-node JetStream cluster of the test's own on loopback, with the
// nats-server binary of the shared cluster (or skips/fails t as Missing does when there is
// none), and stops every node by its PID when t ends. A test that kills nodes
// (NATSCluster.KillNode) uses one, so that the shared cluster is never short of a node and a
// restarted node lives no longer than the test.
func PrivateNATS(t testing.TB) NATSCluster {
	t.Helper()
	shared := NATS(t)
	bin, err := os.ReadFile(filepath.Join(shared.node(0), "bin"))
	if err != nil {
		t.Fatalf("testenv: the nats-server binary of the shared cluster: %v", err)
	}
	dir, err := os.MkdirTemp("", "wharf-nats-")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	c := NATSCluster{dir: dir}
	t.Cleanup(func() {
		for i := range 3 {
			c.stopNode(t, c.node(i))
		}
		if t.Failed() { // what the servers saw is the first thing to read when a test fails here
			for i := range 3 {
				logTail(t, filepath.Join(c.node(i), "log"), 60)
			}
		}
		_ = os.RemoveAll(dir)
	})
	// A free port picked here can be taken by another test process before a node binds it: that
	// node then exits at once, and another server may even answer its health checks. Such a
	// start is tried again, on other ports, up to three times.
	for attempt := 1; ; attempt++ {
		dead, healthy := c.startPrivate(t, bin)
		if healthy {
			break
		}
		if dead < 0 || attempt == 3 {
			t.Fatalf("testenv: the private nats cluster is not healthy 30s after its start (attempt %d)", attempt)
		}
		t.Logf("testenv: private nats node %d exited at its start (a port taken meanwhile?); starting the cluster again on other ports", dead)
		for i := range 3 {
			c.stopNode(t, c.node(i))
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return c
}

// startPrivate writes the three nodes' arguments, on fresh ports, starts them and waits up to
// 30 s for each to be healthy (a fresh cluster elects its JetStream meta leader). It returns
// whether they all are, and otherwise a node that is not running (-1: none).
func (c *NATSCluster) startPrivate(t testing.TB, bin []byte) (dead int, healthy bool) {
	t.Helper()
	var ports [9]int
	for i := range ports {
		ports[i] = FreeLoopbackPort(t)
	}
	routes := fmt.Sprintf("nats://127.0.0.1:%d,nats://127.0.0.1:%d,nats://127.0.0.1:%d", ports[2], ports[5], ports[8])
	// Each private cluster has a name and server names of its own: should a port a killed node
	// freed be taken by another test's cluster, the routes between the two are refused rather
	// than merged into one cluster with two servers of each name.
	name := "wharf-" + filepath.Base(c.dir)
	c.URLs = c.URLs[:0]
	for i := range 3 {
		d := c.node(i)
		_ = os.RemoveAll(filepath.Join(d, "data")) // an earlier attempt's, of other peers
		if err := os.MkdirAll(filepath.Join(d, "data"), 0o700); err != nil {
			t.Fatalf("testenv: %v", err)
		}
		args := []string{"-a", "127.0.0.1", "-p", strconv.Itoa(ports[i*3]), "-m", strconv.Itoa(ports[i*3+1]), "-js",
			"-sd", filepath.Join(d, "data"), "-n", fmt.Sprintf("%s-n%d", name, i), "--cluster_name", name,
			"--cluster", fmt.Sprintf("nats://127.0.0.1:%d", ports[i*3+2]), "--routes", routes}
		if err := os.WriteFile(filepath.Join(d, "bin"), bin, 0o600); err != nil {
			t.Fatalf("testenv: %v", err)
		}
		if err := os.WriteFile(filepath.Join(d, "args"), []byte(strings.Join(args, "\n")+"\n"), 0o600); err != nil {
			t.Fatalf("testenv: %v", err)
		}
		c.URLs = append(c.URLs, fmt.Sprintf("nats://127.0.0.1:%d", ports[i*3]))
	}
	for i := range 3 {
		if !c.launch(t, c.node(i)) {
			return i, false
		}
	}
	for i := range 3 {
		ok := c.waitHealthy(c.node(i), "", 30*time.Second)
		for j := range 3 {
			if !c.running(c.node(j)) {
				return j, false
			}
		}
		if !ok {
			return -1, false
		}
	}
	return -1, true
}

// running reports whether the node of dir's recorded process is alive.
func (c NATSCluster) running(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && pid > 0 && alive(pid)
}

// stopNode SIGKILLs the node of dir by its recorded PID and waits until it is gone.
func (c NATSCluster) stopNode(t testing.TB, dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		return // never started
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(10 * time.Second); alive(pid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("testenv: the private nats node %d outlived its SIGKILL", pid)
	}
}

// logTail logs the last n lines of the file at path (a private node's log) to t.
func logTail(t testing.TB, path string, n int) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Logf("testenv: %v", err)
		return
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	t.Logf("testenv: the last %d lines of %s:\n%s", len(lines), path, strings.Join(lines, "\n"))
}
