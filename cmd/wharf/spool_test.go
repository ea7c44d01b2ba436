package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/wharfdata/wharf/spool"
)

// spoolStatusJSON runs `wharf spool status --format json` in process and decodes it.
func spoolStatusJSON(t *testing.T, dir string) spool.Status {
	t.Helper()
	r := wharfRun(t, "", "spool", "status", "--spool", dir, "--format", "json").must(t, 0)
	var st spool.Status
	if err := json.Unmarshal([]byte(r.out), &st); err != nil {
		t.Fatalf("status JSON %q: %v", r.out, err)
	}
	return st
}

func TestSpoolInitAddStatus(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	r := wharfRun(t, "", "spool", "init", dir, "--format", "json").must(t, 0)
	var info struct {
		Dir, Epoch string
		Format     int
	}
	must(t, json.Unmarshal([]byte(r.out), &info))
	if info.Dir != dir || len(info.Epoch) != 16 || info.Format != 1 {
		t.Errorf("init said %s", r.out)
	}

	src := t.TempDir()
	writeFiles(t, src, map[string]string{"a.ndjson": "{\"a\":1}\n", "b.csv.gz": "bbbb", "c": "cc"})
	a, b, c := filepath.Join(src, "a.ndjson"), filepath.Join(src, "b.csv.gz"), filepath.Join(src, "c")
	r = wharfRun(t, "", "spool", "add", "--spool", dir, "--dataset", "events", "--time", "2026-03-04T05:06:07+01:00",
		"--records", "100", a, b).must(t, 0)
	want := []string{
		"moved " + a + " -> ready/events/00000000000000000001_00000000000000000100.ndjson (8 B, sequence 1-100, sha256 ",
		"moved " + b + " -> ready/events/00000000000000000101_00000000000000000200.csv.gz (4 B, sequence 101-200, sha256 ",
	}
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], want[0]) || !strings.HasPrefix(lines[1], want[1]) {
		t.Errorf("add said:\n%s\nwant lines starting:\n%s", r.out, strings.Join(want, "\n"))
	}
	for _, p := range []string{a, b} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("moved source %s still there: %v", p, err)
		}
	}

	r = wharfRun(t, "", "--format", "json", "spool", "add", "--spool", dir, "--dataset", "raw", "--copy", c).must(t, 0)
	var added struct {
		spool.File
		Source string
	}
	must(t, json.Unmarshal([]byte(r.out), &added))
	if added.Source != c || added.First != 201 || added.Ext != "bin" || added.State != spool.Eligible || added.Size != 2 {
		t.Errorf("add --format json said %s", r.out)
	}
	if readFile(t, c) != "cc" || readFile(t, added.Path) != "cc" {
		t.Error("--copy did not keep the source, or spooled other bytes")
	}
	if r := wharfRun(t, "", "-q", "spool", "add", "--spool", dir, "--dataset", "raw", "--copy", c).must(t, 0); r.out != "" {
		t.Errorf("--quiet printed %q", r.out)
	}

	st := spoolStatusJSON(t, dir)
	if st.Next != 203 || st.Files.Eligible != (spool.Count{Files: 4, Bytes: 16}) || st.Oldest == nil || st.Oldest.ID != 1 ||
		st.Owner.Held || st.Epoch != info.Epoch || st.Records != 8 {
		t.Errorf("status %+v", st)
	}
	if st.Oldest.Time.Format("2006-01-02T15:04:05Z07:00") != "2026-03-04T04:06:07Z" {
		t.Errorf("event time %v, want 04:06:07 UTC", st.Oldest.Time)
	}
	r = wharfRun(t, "", "spool", "status", "--spool", dir).must(t, 0)
	for _, s := range []string{"epoch:          " + info.Epoch, "next sequence:  203", "owner:          none",
		"oldest pending: ready/events/00000000000000000001_00000000000000000100.ndjson", "eligible   4      16 B", "uploaded   0      0 B"} {
		if !strings.Contains(r.out, s) {
			t.Errorf("status lacks %q:\n%s", s, r.out)
		}
	}
}

func TestSpoolErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	wharfRun(t, "", "spool", "init", dir).must(t, 0)
	src := t.TempDir()
	writeFiles(t, src, map[string]string{"a.csv": "a", "odd.tar-v1": "x", "notes.txt": "n"})
	a := filepath.Join(src, "a.csv")
	missing := filepath.Join(src, "missing.csv")

	for _, c := range []struct {
		name string
		args []string
		exit int
		says []string
	}{
		{"init on a spool", []string{"spool", "init", dir}, 1, []string{dir, "never reset", "[WHARF_SPOOL_EXISTS]"}},
		{"init on a busy directory", []string{"spool", "init", src}, 1, []string{src, "not empty", "[WHARF_SPOOL_INVALID]"}},
		{"init without a directory", []string{"spool", "init"}, 2, []string{"[WHARF_USAGE]"}},
		{"add without --spool", []string{"spool", "add", "--dataset", "d", a}, 2, []string{"--spool", "[WHARF_USAGE]"}},
		{"add without --dataset", []string{"spool", "add", "--spool", dir, a}, 2, []string{"--dataset", "[WHARF_USAGE]"}},
		{"add without files", []string{"spool", "add", "--spool", dir, "--dataset", "d"}, 2, []string{"[WHARF_USAGE]"}},
		{"bad dataset", []string{"spool", "add", "--spool", dir, "--dataset", "Web/Logs", a}, 2, []string{`"Web/Logs"`, "[WHARF_USAGE]"}},
		{"bad time", []string{"spool", "add", "--spool", dir, "--dataset", "d", "--time", "yesterday", a}, 2, []string{"RFC 3339", "[WHARF_USAGE]"}},
		{"zero records", []string{"spool", "add", "--spool", dir, "--dataset", "d", "--records", "0", a}, 2, []string{"--records", "[WHARF_USAGE]"}},
		{"a missing file, after a good one", []string{"spool", "add", "--spool", dir, "--dataset", "d", a, missing}, 1, []string{missing, "[WHARF_NOT_FOUND]"}},
		{"a bad extension", []string{"spool", "add", "--spool", dir, "--dataset", "d", a, filepath.Join(src, "odd.tar-v1")}, 1, []string{"odd.tar-v1", "--ext", "[WHARF_SPOOL_INPUT_INVALID]"}},
		{"a directory", []string{"spool", "add", "--spool", dir, "--dataset", "d", src}, 1, []string{src, "not a regular file", "[WHARF_SPOOL_INPUT_INVALID]"}},
		{"not a spool", []string{"spool", "add", "--spool", src, "--dataset", "d", a}, 1, []string{src, "wharf spool init", "[WHARF_SPOOL_INVALID]"}},
		{"status of no spool", []string{"spool", "status", "--spool", filepath.Join(src, "nope")}, 1, []string{"nope", "wharf spool init", "[WHARF_SPOOL_INVALID]"}},
		{"status without --spool", []string{"spool", "status"}, 2, []string{"--spool", "[WHARF_USAGE]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := wharfRun(t, "", c.args...).must(t, c.exit)
			for _, s := range c.says {
				if !strings.Contains(r.err, s) {
					t.Errorf("stderr %q lacks %q", r.err, s)
				}
			}
		})
	}
	// Every file is checked first: the good file before the missing one was not added.
	if st := spoolStatusJSON(t, dir); st.Next != 1 {
		t.Errorf("refused adds changed the spool: %+v", st)
	}
	if readFile(t, a) != "a" {
		t.Error("a refused add moved its file")
	}

	// A damaged catalog: status names the path and line, in JSON too.
	cat := filepath.Join(dir, spool.CatalogFile)
	wharfRun(t, "", "spool", "add", "--spool", dir, "--dataset", "d", a).must(t, 0)
	b, err := os.ReadFile(cat)
	must(t, err)
	must(t, os.WriteFile(cat, append([]byte("garbage\n"), b...), 0o644))
	r := wharfRun(t, "", "--format", "json", "spool", "status", "--spool", dir).must(t, 1)
	var e struct {
		Error, Code string
		Exit        int
	}
	must(t, json.Unmarshal([]byte(r.err), &e))
	if e.Code != "WHARF_SPOOL_CORRUPT" || e.Exit != 1 || !strings.Contains(e.Error, cat+" line 1") {
		t.Errorf("status of a corrupt catalog: %s", r.err)
	}
	// A torn last line is a warning, not an error.
	must(t, os.WriteFile(cat, append(b, `{"type":"fin`...), 0o644))
	r = wharfRun(t, "", "spool", "status", "--spool", dir).must(t, 0)
	if !strings.Contains(r.out, "warning:") || !strings.Contains(r.out, cat+" line 3") {
		t.Errorf("status of a torn catalog:\n%s", r.out)
	}
}

func TestSpoolHelp(t *testing.T) {
	for _, c := range [][]string{{"spool", "--help"}, {"spool", "init", "--help"}, {"spool", "add", "--help"}, {"spool", "status", "--help"}} {
		r := wharfRun(t, "", c...).must(t, 0)
		if !strings.Contains(r.out, "Examples:") || !strings.Contains(r.out, "wharf spool") {
			t.Errorf("%v: help without examples:\n%s", c, r.out)
		}
	}
}

// TestE2ESpoolConcurrentAdds runs several `wharf spool add` processes at once: every file gets
// its own sequence numbers, contiguous from 1.
func TestE2ESpoolConcurrentAdds(t *testing.T) {
	const procs, each = 4, 6
	dir := filepath.Join(t.TempDir(), "spool")
	wharf(t, "spool", "init", dir).must(t, 0)
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for p := range procs {
		src := t.TempDir()
		args := []string{"--format", "json", "spool", "add", "--spool", dir, "--dataset", "d", "--records", strconv.Itoa(p + 1)}
		for i := range each {
			name := fmt.Sprintf("p%d-%d.ndjson", p, i)
			writeFiles(t, src, map[string]string{name: name + "\n"})
			args = append(args, filepath.Join(src, name))
		}
		cmd := cli{}.command(args...)
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		must(t, cmd.Start())
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	var files []spool.File
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("adder %d: %v\n%s", i, err, outs[i])
		}
		for _, line := range strings.Split(strings.TrimSpace(outs[i].String()), "\n") {
			var f spool.File
			must(t, json.Unmarshal([]byte(line), &f))
			files = append(files, f)
		}
	}
	slices.SortFunc(files, func(a, b spool.File) int { return int(a.First) - int(b.First) })
	next := uint64(1)
	for _, f := range files {
		if f.First != next {
			t.Fatalf("%s starts at %d, want %d", f.Name, f.First, next)
		}
		next = f.Last + 1
	}
	st := spoolStatusJSON(t, dir)
	if len(files) != procs*each || st.Next != next || st.Files.Eligible.Files != procs*each {
		t.Errorf("%d files, next %d; status %+v", len(files), next, st)
	}
}

// TestE2ESpoolOwnerShown: while this test process owns the spool, status (another process)
// names its PID; a second owner is refused.
func TestE2ESpoolOwnerShown(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	wharf(t, "spool", "init", dir).must(t, 0)
	s, err := spool.Open(dir, spool.OpenOptions{})
	must(t, err)
	defer s.Close()
	r := wharf(t, "spool", "status", "--spool", dir).must(t, 0)
	if want := fmt.Sprintf("owner:          PID %d (holds %s)", os.Getpid(), filepath.Join(dir, spool.LockFile)); !strings.Contains(r.out, want) {
		t.Errorf("status lacks %q:\n%s", want, r.out)
	}
	if _, err := spool.Open(dir, spool.OpenOptions{}); err == nil || !strings.Contains(err.Error(), "PID "+strconv.Itoa(os.Getpid())) {
		t.Errorf("a second owner: %v", err)
	}
}

// TestE2ESpoolNotWritable: adding to a spool the user may not write fails naming the path.
// Root ignores permission bits, so as root the binary runs as the user nobody.
func TestE2ESpoolNotWritable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	wharf(t, "spool", "init", dir).must(t, 0)
	src := t.TempDir()
	writeFiles(t, src, map[string]string{"a.csv": "a"})
	tmp := filepath.Join(dir, spool.TmpDir)
	cmd := cli{}.command("spool", "add", "--spool", dir, "--dataset", "d", "--copy", filepath.Join(src, "a.csv"))
	if os.Geteuid() == 0 {
		for _, p := range []string{filepath.Dir(dir), filepath.Dir(filepath.Dir(dir)), src, filepath.Dir(src)} {
			must(t, os.Chmod(p, 0o755))
		}
		bin := filepath.Join(t.TempDir(), "wharf")
		must(t, os.Chmod(filepath.Dir(bin), 0o755))
		b, err := os.ReadFile(wharfBin)
		must(t, err)
		must(t, os.WriteFile(bin, b, 0o755))
		cmd.Path, cmd.Args[0] = bin, bin
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	} else {
		must(t, os.Chmod(tmp, 0o555))
		t.Cleanup(func() { _ = os.Chmod(tmp, 0o755) })
	}
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), tmp) || !strings.Contains(string(out), "[WHARF_FORBIDDEN]") {
		t.Errorf("add to a spool not writable: %v, %q; want exit 1 with WHARF_FORBIDDEN naming %s", err, out, tmp)
	}
	if st := spoolStatusJSON(t, dir); st.Next != 1 {
		t.Errorf("the refused add changed the spool: %+v", st)
	}
}
