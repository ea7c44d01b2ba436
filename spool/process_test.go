//go:build unix

package spool

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// The tests run this test binary again as a child process (a second owner, concurrent adders,
// an adder killed at a chosen point), chosen by SPOOL_TEST_CHILD.
func TestMain(m *testing.M) {
	if mode := os.Getenv("SPOOL_TEST_CHILD"); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child is the child process's main.
//
//	own  open SPOOL_TEST_DIR as its owner, print "owned", hold it until stdin closes
//	add  add each file of SPOOL_TEST_FILES (newline-separated), the i-th with 1+i%3 records,
//	     printing each File as JSON or "error: message [CODE]"; SPOOL_TEST_COPY copies,
//	     SPOOL_TEST_NOLINK refuses hard links, SPOOL_TEST_KILL=point:n sends itself SIGKILL the
//	     n-th time the add reaches point, SPOOL_TEST_PAUSE=duration sleeps at every point
func child(mode string) int {
	dir := os.Getenv("SPOOL_TEST_DIR")
	switch mode {
	case "own":
		s, err := Open(dir, OpenOptions{})
		if err != nil {
			fmt.Printf("error: %v [%s]\n", err, errcode.NameOf(err))
			return 1
		}
		fmt.Println("owned")
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = s.Close()
		return 0
	case "add":
		childHooks()
		for i, src := range strings.Split(os.Getenv("SPOOL_TEST_FILES"), "\n") {
			f, err := Add(bg, dir, src, AddOptions{Dataset: "d", Copy: os.Getenv("SPOOL_TEST_COPY") != "", Records: uint64(1 + i%3)})
			if err != nil {
				fmt.Printf("error: %v [%s]\n", err, errcode.NameOf(err))
				continue
			}
			b, _ := json.Marshal(f)
			fmt.Println(string(b))
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "unknown child mode %q\n", mode)
	return 2
}

func childHooks() {
	if os.Getenv("SPOOL_TEST_NOLINK") != "" {
		link = func(string, string) error { return &os.LinkError{Op: "link", Err: syscall.EXDEV} }
	}
	point, nth, _ := strings.Cut(os.Getenv("SPOOL_TEST_KILL"), ":")
	n, _ := strconv.Atoi(nth)
	pause, _ := time.ParseDuration(os.Getenv("SPOOL_TEST_PAUSE"))
	if point == "" && pause == 0 {
		return
	}
	seen := 0
	testHook = func(p string) {
		time.Sleep(pause)
		if p == point {
			if seen++; seen == n {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
		}
	}
}

// childCmd returns a command running this test binary as a child in mode.
func childCmd(t *testing.T, bin, mode, dir string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, "SPOOL_TEST_CHILD="+mode, "SPOOL_TEST_DIR="+dir)...)
	return cmd
}

func testBinary(t *testing.T) string {
	bin, err := os.Executable()
	must(t, err)
	return bin
}

// TestSecondOwnerRefused holds a spool in a child process: Open here is refused, naming the
// lock file and the child's PID, and status reports the owner; once the child lets go, Open
// succeeds.
func TestSecondOwnerRefused(t *testing.T) {
	dir := newSpool(t)
	add(t, dir, "d", "x", AddOptions{})
	cmd := childCmd(t, testBinary(t), "own", dir)
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "owned\n" {
		t.Fatalf("child said %q, %v", line, err)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	_, err = Open(dir, OpenOptions{})
	wantKind(t, err, ErrLocked, filepath.Join(dir, LockFile), "PID "+pid)
	st, err := ReadStatus(dir)
	must(t, err)
	if !st.Owner.Held || st.Owner.PID != cmd.Process.Pid {
		t.Errorf("status owner %+v, want PID %s", st.Owner, pid)
	}
	// Adders need no ownership.
	add(t, dir, "d", "y", AddOptions{})
	stdin.Close()
	must(t, cmd.Wait())
	s := open(t, dir, nil)
	if len(s.Pending()) != 2 {
		t.Errorf("pending %d", len(s.Pending()))
	}
}

// TestConcurrentAdders runs several adder processes at once while this process, the owner,
// refreshes and records uploads: every file gets unique, contiguous sequence numbers, and the
// catalog replays to exactly the files the adders reported.
func TestConcurrentAdders(t *testing.T) {
	const procs, each = 4, 10
	dir := newSpool(t)
	bin := testBinary(t)
	s := open(t, dir, nil)
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for p := range procs {
		var files []string
		for i := range each {
			files = append(files, writeSrc(t, t.TempDir(), fmt.Sprintf("p%d-%d.ndjson", p, i), fmt.Sprintf("proc %d file %d\n", p, i)))
		}
		cmd := childCmd(t, bin, "add", dir, "SPOOL_TEST_FILES="+strings.Join(files, "\n"))
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		must(t, cmd.Start())
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	done := make(chan struct{})
	go func() {
		for _, c := range cmds {
			_ = c.Wait()
		}
		close(done)
	}()
	uploaded := map[uint64]bool{}
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-time.After(time.Millisecond):
		}
		must(t, s.Refresh(bg))
		for _, f := range s.Pending() {
			must(t, s.Uploaded(bg, f.ID, "k"+strconv.FormatUint(f.ID, 10), "", "ok"))
			uploaded[f.ID] = true
		}
	}
	var reported []File
	for p, out := range outs {
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var f File
			if err := json.Unmarshal([]byte(line), &f); err != nil {
				t.Fatalf("adder %d said %q", p, line)
			}
			reported = append(reported, f)
		}
	}
	if len(reported) != procs*each {
		t.Fatalf("%d files reported, want %d", len(reported), procs*each)
	}
	slices.SortFunc(reported, func(a, b File) int { return int(a.First) - int(b.First) })
	next := uint64(1)
	for _, f := range reported {
		if f.First != next || f.Last < f.First {
			t.Fatalf("file %s has %d-%d, want first %d: sequence numbers overlap or skip", f.Name, f.First, f.Last, next)
		}
		next = f.Last + 1
	}
	must(t, s.Close())
	s2 := open(t, dir, nil)
	if s2.Next() != next || len(s2.Retained()) != len(uploaded) || len(s2.Pending())+len(uploaded) != procs*each {
		t.Errorf("replayed: next %d (want %d), retained %d (uploaded %d), pending %d",
			s2.Next(), next, len(s2.Retained()), len(uploaded), len(s2.Pending()))
	}
	t.Logf("the owner recorded %d uploads while the adders ran", len(uploaded))
}

// The points of an add where the crash test kills the adder.
var crashPoints = []string{"tmp-written", "renamed", "mid-finalized", "finalized", "mid-eligible", "eligible", "source-removed"}

type crashMode struct {
	name         string
	copy, noLink bool
}

var crashModes = []crashMode{{"move", false, false}, {"move-by-copy", false, true}, {"copy", true, false}}

// TestCrashDuringAdd kills an adder (SIGKILL) at each point of an add, and at random times,
// in each mode; then checks that nothing was lost or recorded half-done, and that retrying the
// adds a user would retry spools every file exactly once.
func TestCrashDuringAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test runs ~33 processes")
	}
	bin := testBinary(t)
	rng := rand.New(rand.NewPCG(7, 7))
	for _, m := range crashModes {
		for i, p := range crashPoints {
			// Every other point, the retry comes before an owner opens the spool: it meets what
			// the crash left (a link in tmp/ or ready/, a file recorded finalized only) itself.
			// A copy is not retried blindly: a retried copy after its records is a second file.
			retryFirst := i%2 == 1 && !m.copy
			nth := 1 + rng.IntN(4)
			t.Run(fmt.Sprintf("%s/%s:%d/retry-first=%v", m.name, p, nth, retryFirst), func(t *testing.T) {
				dupOK := m.noLink && slices.Contains([]string{"finalized", "mid-eligible", "eligible"}, p)
				crashOnce(t, bin, m, []string{fmt.Sprintf("SPOOL_TEST_KILL=%s:%d", p, nth)}, 0, retryFirst, dupOK)
			})
		}
		for seed := range 4 {
			delay := time.Duration(5+rng.IntN(80)) * time.Millisecond
			t.Run(fmt.Sprintf("%s/random-%v", m.name, delay), func(t *testing.T) {
				crashOnce(t, bin, m, []string{"SPOOL_TEST_PAUSE=2ms"}, delay, seed%2 == 1 && !m.copy, m.noLink)
			})
		}
	}
}

// crashOnce runs one adder of four files with env, killing it after killAfter if it is not 0,
// and checks the spool before and after the retries. dupOK allows a file spooled twice: a
// move across file systems killed after its records, then retried.
func crashOnce(t *testing.T, bin string, m crashMode, env []string, killAfter time.Duration, retryFirst, dupOK bool) {
	if m.noLink {
		noLinks(t)
	}
	dir := newSpool(t)
	srcDir := t.TempDir()
	orig := map[string]string{} // source path → sha256 of its content
	var srcs []string
	for i := range 4 {
		b := make([]byte, 1000+rand.IntN(200_000))
		for j := range b {
			b[j] = byte('a' + (i+j)%26)
		}
		p := writeSrc(t, srcDir, fmt.Sprintf("f%d.ndjson", i), string(b))
		orig[p] = sha(b)
		srcs = append(srcs, p)
	}
	env = append(env, "SPOOL_TEST_FILES="+strings.Join(srcs, "\n"))
	if m.copy {
		env = append(env, "SPOOL_TEST_COPY=1")
	}
	if m.noLink {
		env = append(env, "SPOOL_TEST_NOLINK=1")
	}
	cmd := childCmd(t, bin, "add", dir, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	must(t, cmd.Start())
	if killAfter > 0 {
		time.Sleep(killAfter)
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}
	err := cmd.Wait()
	killed := false
	if ee, ok := err.(*exec.ExitError); ok {
		ws, _ := ee.Sys().(syscall.WaitStatus)
		killed = ws.Signaled() && ws.Signal() == syscall.SIGKILL
	}
	if err != nil && !killed {
		t.Fatalf("the adder failed: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "error:") {
		t.Fatalf("an add failed before the kill:\n%s", out.String())
	}
	t.Logf("killed %v; the adder printed %d file(s)", killed, strings.Count(out.String(), "\n"))

	if retryFirst {
		retryAdds(t, dir, m, srcs, orig, nil)
	}
	var logs logBuf
	s := open(t, dir, logs.logger())
	tornKill := strings.Contains(strings.Join(env, " "), "=mid-")
	if tornKill && killed && !retryFirst && !strings.Contains(logs.String(), filepath.Join(dir, CatalogFile)+" line ") {
		t.Errorf("a record was torn, but no warning names the catalog's path and line:\n%s", logs.String())
	}
	checkSpooled(t, dir, s, m, orig, retryFirst, dupOK)
	must(t, s.Close())
	if !retryFirst {
		retryAdds(t, dir, m, srcs, orig, s)
		s = open(t, dir, nil)
		checkSpooled(t, dir, s, m, orig, true, dupOK)
	}
}

// retryAdds adds again what a user would after a crash: every source still there when moving;
// when copying, the sources whose content the spool (seen by the closed owner s) lacks.
func retryAdds(t *testing.T, dir string, m crashMode, srcs []string, orig map[string]string, s *Spool) {
	have := map[string]bool{}
	if s != nil {
		for _, f := range s.rd.st.files {
			have[f.SHA256] = true
		}
	}
	for _, src := range srcs {
		if _, err := os.Stat(src); err != nil || (m.copy && have[orig[src]]) {
			continue
		}
		if _, err := Add(bg, dir, src, AddOptions{Dataset: "d", Copy: m.copy}); err != nil {
			t.Fatalf("retrying %s: %v", src, err)
		}
	}
}

// checkSpooled checks the spool after a crash (and, with once, after the retries): every
// recorded file whole in ready/ with its recorded hash; nothing else in ready/ or tmp/;
// sequence numbers contiguous; every source either spooled or still in place (with once:
// spooled exactly once — or twice, with dupOK — and, when moving, gone).
func checkSpooled(t *testing.T, dir string, s *Spool, m crashMode, orig map[string]string, once, dupOK bool) {
	t.Helper()
	files := s.Pending()
	copies := map[string]int{}
	next := uint64(1)
	var names []string
	for _, f := range files {
		if f.First != next {
			t.Errorf("file %s starts at %d, want %d", f.Name, f.First, next)
		}
		next = f.Last + 1
		if got := fileSHA(t, f.Path); got != f.SHA256 {
			t.Errorf("%s holds sha256 %s, the catalog records %s", f.Name, got, f.SHA256)
		}
		copies[f.SHA256]++
		names = append(names, f.Name)
	}
	if s.Next() != next {
		t.Errorf("next sequence %d, want %d", s.Next(), next)
	}
	if st := s.Stats(); st.Finalized.Files != 0 {
		t.Errorf("%d files left finalized, not eligible", st.Finalized.Files)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, TmpDir)); len(ents) != 0 {
		t.Errorf("tmp/ holds %d file(s) after Open", len(ents))
	}
	onDisk, _ := filepath.Glob(filepath.Join(dir, ReadyDir, "*", "*"))
	for i, p := range onDisk {
		onDisk[i], _ = filepath.Rel(dir, p)
	}
	if !slices.Equal(onDisk, names) {
		t.Errorf("ready/ holds %v, the catalog %v", onDisk, names)
	}
	valid := map[string]bool{}
	for src, sum := range orig {
		valid[sum] = true
		b, err := os.ReadFile(src)
		present := err == nil
		if present && sha(b) != sum {
			t.Errorf("source %s changed", src)
		}
		switch {
		case copies[sum] == 0 && !present:
			t.Errorf("LOST: %s is neither spooled nor in place", src)
		case m.copy && !present:
			t.Errorf("a copied source %s was removed", src)
		case once && copies[sum] == 2 && dupOK:
			// Moving across file systems, a retry after a crash between the records and the
			// source's removal spools the file again (package doc, "Guarantees").
			t.Logf("%s spooled %d times after the retries (a cross-file-system move retried)", src, copies[sum])
		case once && copies[sum] != 1:
			t.Errorf("%s spooled %d times after the retries, want once", src, copies[sum])
		case once && !m.copy && present:
			t.Errorf("moved source %s still in place after the retries", src)
		}
	}
	for sum, n := range copies {
		if !valid[sum] {
			t.Errorf("%d spooled file(s) hold content no source had (sha256 %s)", n, sum)
		}
	}
}

// TestNotWritableSpool: adding to, or owning, a spool the process may not write is a clear
// error naming the path (store.ErrForbidden). Root ignores permission bits, so as root the
// adder runs as the user nobody.
func TestNotWritableSpool(t *testing.T) {
	dir := newSpool(t)
	srcDir := t.TempDir()
	src := writeSrc(t, srcDir, "a.csv", "x")
	if os.Geteuid() != 0 {
		must(t, os.Chmod(filepath.Join(dir, TmpDir), 0o555))
		must(t, os.Chmod(dir, 0o555))
		t.Cleanup(func() { _ = os.Chmod(dir, 0o755); _ = os.Chmod(filepath.Join(dir, TmpDir), 0o755) })
		_, err := Add(bg, dir, src, AddOptions{Dataset: "d", Copy: true})
		wantKind(t, err, store.ErrForbidden, filepath.Join(dir, TmpDir))
		_, err = Open(dir, OpenOptions{})
		wantKind(t, err, store.ErrForbidden, filepath.Join(dir, LockFile))
		return
	}
	// As root: the spool belongs to root (0755); the child runs as nobody from a copy of this
	// binary that nobody may execute.
	for p := filepath.Dir(dir); p != "/" && p != os.TempDir(); p = filepath.Dir(p) {
		must(t, os.Chmod(p, 0o755))
	}
	must(t, os.Chmod(srcDir, 0o755))
	for p := filepath.Dir(srcDir); p != "/" && p != os.TempDir(); p = filepath.Dir(p) {
		must(t, os.Chmod(p, 0o755))
	}
	binDir := t.TempDir()
	must(t, os.Chmod(binDir, 0o755))
	bin := filepath.Join(binDir, "spool.test")
	b, err := os.ReadFile(testBinary(t))
	must(t, err)
	must(t, os.WriteFile(bin, b, 0o755))
	asNobody := func(mode string, env ...string) string {
		cmd := childCmd(t, bin, mode, dir, env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil && !strings.Contains(string(out), "error:") {
			t.Skipf("cannot run a child as nobody here: %v %s", err, out)
		}
		return string(out)
	}
	out := asNobody("add", "SPOOL_TEST_FILES="+src, "SPOOL_TEST_COPY=1")
	if !strings.Contains(out, filepath.Join(dir, TmpDir)) || !strings.Contains(out, "[WHARF_FORBIDDEN]") {
		t.Errorf("adding as nobody: %q, want WHARF_FORBIDDEN naming %s", out, filepath.Join(dir, TmpDir))
	}
	out = asNobody("add", "SPOOL_TEST_FILES="+src)
	if !strings.Contains(out, srcDir) || !strings.Contains(out, "[WHARF_FORBIDDEN]") || !strings.Contains(out, "--copy") {
		t.Errorf("moving out of a directory nobody may not write: %q", out)
	}
	out = asNobody("own")
	if !strings.Contains(out, filepath.Join(dir, LockFile)) || !strings.Contains(out, "[WHARF_FORBIDDEN]") {
		t.Errorf("owning as nobody: %q, want WHARF_FORBIDDEN naming %s", out, filepath.Join(dir, LockFile))
	}
	if _, err := os.Stat(src); err != nil {
		t.Errorf("the source is gone: %v", err)
	}
	st, err := ReadStatus(dir)
	must(t, err)
	if st.Next != 1 {
		t.Errorf("a refused add changed the spool: %+v", st)
	}
}
