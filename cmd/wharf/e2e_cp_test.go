package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree is a small directory of files for the recursive tests.
var tree = map[string]string{
	"a.txt":          "alpha\n",
	"sub/b.csv":      "id\n1\n",
	"sub/deep/c.log": strings.Repeat("log line\n", 500),
	"with space.txt": "spaced\n",
}

// checkTree fails t unless dir holds exactly tree.
func checkTree(t *testing.T, dir string) {
	t.Helper()
	var got []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(p, ".wharf-meta") {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	var want []string
	for k := range tree {
		want = append(want, k)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s holds %q, want %q", dir, got, want)
	}
	for k, v := range tree {
		if b := readFile(t, filepath.Join(dir, filepath.FromSlash(k))); b != v {
			t.Errorf("%s/%s = %q, want %q", dir, k, b, v)
		}
	}
}

func TestE2ECopyTreeFileStore(t *testing.T) {
	src, root := t.TempDir(), t.TempDir()
	writeFiles(t, src, tree)
	st := "file://" + root + "/store"
	r := wharf(t, "cp", "-r", "-j", "3", src, st).must(t, 0)
	if sum := lastLine(r.out); !strings.HasPrefix(sum, "copied 4 files, ") || !strings.Contains(sum, "MiB/s") {
		t.Errorf("summary %q", r.out)
	}
	checkTree(t, filepath.Join(root, "store"))
	// Down into a directory that does not exist yet; a trailing slash means the same.
	wharf(t, "cp", "-r", st+"/", filepath.Join(root, "down")).must(t, 0)
	checkTree(t, filepath.Join(root, "down"))
	// JSON summary.
	r = wharf(t, "cp", "-r", "--format", "json", filepath.Join(root, "down"), filepath.Join(root, "again")).must(t, 0)
	var sum cpSummary
	if err := json.Unmarshal([]byte(lastLine(r.out)), &sum); err != nil || sum.Files != 4 || sum.Bytes != int64(len(strings.Join(mapValues(tree), ""))) {
		t.Errorf("json summary %q: %+v %v", r.out, sum, err)
	}
}

// lastLine is the last line of out: a recursive copy's summary, after a line per file.
func lastLine(out string) string {
	out = strings.TrimSuffix(out, "\n")
	return out[strings.LastIndexByte(out, '\n')+1:]
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func TestE2ECopyDryRunWritesNothing(t *testing.T) {
	src, root := t.TempDir(), t.TempDir()
	writeFiles(t, src, tree)
	dst := filepath.Join(root, "dst")
	r := wharf(t, "cp", "-r", "--dry-run", src, dst).must(t, 0)
	if !strings.Contains(r.out, "would copy "+filepath.Join(src, "sub/b.csv")+" -> "+filepath.Join(dst, "sub/b.csv")) ||
		!strings.Contains(r.out, "dry run: would copy 4 files") {
		t.Errorf("dry run said:\n%s", r.out)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Errorf("dry run made %s: %v", dst, err)
	}
	wharf(t, "cp", "--dry-run", filepath.Join(src, "a.txt"), "file://"+dst+"/").must(t, 0)
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Errorf("dry run of one file made %s", dst)
	}
}

func TestE2ECopyTreeIfAbsent(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	writeFiles(t, src, tree)
	writeFiles(t, dst, map[string]string{"a.txt": "old\n", "sub/b.csv": "old\n"})
	r := wharf(t, "cp", "-r", "--if-absent", src, dst).must(t, 1)
	if !strings.Contains(r.err, "[WHARF_PRECONDITION_FAILED]") || !strings.Contains(r.err, "2 destinations exist") {
		t.Errorf("stderr %q", r.err)
	}
	if readFile(t, filepath.Join(dst, "a.txt")) != "old\n" || readFile(t, filepath.Join(dst, "sub/b.csv")) != "old\n" {
		t.Error("--if-absent replaced an existing file")
	}
	if readFile(t, filepath.Join(dst, "sub/deep/c.log")) != tree["sub/deep/c.log"] {
		t.Error("--if-absent did not copy the absent files")
	}
}

func TestE2ECopyBadInput(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, tree)
	missing := filepath.Join(dir, "no-such-dir")
	r := wharf(t, "cp", "-r", missing, filepath.Join(dir, "out")).must(t, 1)
	if !strings.Contains(r.err, missing) || !strings.Contains(r.err, "[WHARF_NOT_FOUND]") {
		t.Errorf("missing dir: %q", r.err)
	}
	r = wharf(t, "cp", "-r", "file://"+dir+"/store/nothing/", filepath.Join(dir, "out")).must(t, 1)
	if !strings.Contains(r.err, "nothing") || !strings.Contains(r.err, "[WHARF_NOT_FOUND]") {
		t.Errorf("missing store dir: %q", r.err)
	}
	onto := filepath.Join(dir, "a.txt")
	r = wharf(t, "cp", "-r", filepath.Join(dir, "sub"), onto).must(t, 2)
	if !strings.Contains(r.err, onto) || !strings.Contains(r.err, "is a file") {
		t.Errorf("cp -r onto a file: %q", r.err)
	}
	if readFile(t, onto) != tree["a.txt"] {
		t.Error("cp -r onto a file changed it")
	}
	r = wharf(t, "cp", filepath.Join(dir, "sub"), filepath.Join(dir, "x")).must(t, 2)
	if !strings.Contains(r.err, "use -r") {
		t.Errorf("cp of a directory without -r: %q", r.err)
	}
}

func TestE2ERemoveFileStore(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, tree)
	st := "file://" + dir
	r := wharf(t, "rm", "-r", "--dry-run", st+"/sub").must(t, 0)
	if !strings.Contains(r.out, "would remove "+st+"/sub/deep/c.log") || !strings.Contains(r.out, "would remove 2 object(s)") {
		t.Errorf("dry run:\n%s", r.out)
	}
	if readFile(t, filepath.Join(dir, "sub/b.csv")) != tree["sub/b.csv"] {
		t.Fatal("dry run removed a file")
	}
	wharf(t, "rm", "-r", st+"/sub").must(t, 0)
	if _, err := os.Stat(filepath.Join(dir, "sub", "b.csv")); !os.IsNotExist(err) {
		t.Errorf("rm -r left sub/b.csv: %v", err)
	}
	wharf(t, "rm", st+"/a.txt").must(t, 0)
	r = wharf(t, "rm", st+"/a.txt").must(t, 1)
	if !strings.Contains(r.err, "[WHARF_NOT_FOUND]") {
		t.Errorf("rm of a missing object: %q", r.err)
	}
	if got := entries(t, dir); !slices.Contains(got, "with space.txt") || slices.Contains(got, "a.txt") {
		t.Errorf("left %q", got)
	}
}

func TestE2EContentionFileStore(t *testing.T) {
	r := wharf(t, "probe", "--contention", "4", "--rounds", "2", "--format", "json", t.TempDir()).must(t, 0)
	var res struct {
		SafeForLeases bool `json:"safe_for_leases"`
		Checks        map[string]struct{ Verdict string }
	}
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || !res.SafeForLeases || len(res.Checks) != 4 {
		t.Fatalf("contention on the file store: %q %v", r.out, err)
	}
	for name, c := range res.Checks {
		if c.Verdict != "pass" {
			t.Errorf("file store: %s %s", name, c.Verdict)
		}
	}
	r = wharf(t, "probe", "--contention", "1", t.TempDir()).must(t, 2)
	if !strings.Contains(r.err, "at least 2 writers") {
		t.Errorf("--contention 1: %q", r.err)
	}
}

// TestE2EDiskFullDownload fills a 2 MiB tmpfs with a 4 MiB download: the error names the
// path and no partial file is left. It needs root to mount (it skips otherwise).
func TestE2EDiskFullDownload(t *testing.T) {
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, out)
		}
	})
	src := t.TempDir()
	writeFiles(t, src, map[string]string{"big.bin": strings.Repeat("x", 4<<20), "small.txt": "ok\n"})
	for _, args := range [][]string{
		{"cp", "file://" + src + "/big.bin", mnt + "/"},
		{"cp", "--part-size", "1MiB", "file://" + src + "/big.bin", mnt + "/"},
		{"cp", "-r", "file://" + src, mnt + "/tree"},
		{"cp", "--no-fsync", "--part-size", "1MiB", "file://" + src + "/big.bin", mnt + "/"},
	} {
		r := wharf(t, args...).must(t, 1)
		// With -r, small.txt may be the file the full disk stops first: either path is right.
		if !strings.Contains(r.err, "no space left on device") || !strings.Contains(r.err, filepath.Join(mnt, "")) ||
			!strings.Contains(r.err, "big.bin") && !(args[1] == "-r" && strings.Contains(r.err, "small.txt")) {
			t.Errorf("wharf %v: %q; want no space left naming the path", args, r.err)
		}
		var left []string
		filepath.WalkDir(mnt, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(p, "small.txt") {
				left = append(left, p)
			}
			return nil
		})
		if len(left) > 0 {
			t.Errorf("wharf %v left %q", args, left)
		}
	}
}

// TestE2ECopyNoFsync copies down with --no-fsync, small files and one in parallel parts: the
// files are whole under their final names and no temporary file is left. The flag is refused
// where it cannot apply.
func TestE2ECopyNoFsync(t *testing.T) {
	src, root := t.TempDir(), t.TempDir()
	files := map[string]string{"big.bin": strings.Repeat("0123456789abcdef", 12<<16)} // 12 MiB
	for k, v := range tree {
		files[k] = v
	}
	writeFiles(t, src, files)
	st := "file://" + root + "/store"
	wharf(t, "mb", st).must(t, 0) // a file store: --no-fsync does not apply to it
	wharf(t, "cp", "-r", src, st).must(t, 0)
	down := filepath.Join(root, "down")
	r := wharf(t, "cp", "-r", "--no-fsync", "--part-size", "5MiB", st, down).must(t, 0)
	if !strings.HasPrefix(lastLine(r.out), "copied 5 files, ") {
		t.Errorf("summary %q", r.out)
	}
	for k, v := range files {
		if got := readFile(t, filepath.Join(down, filepath.FromSlash(k))); got != v {
			t.Errorf("%s: %d bytes, want %d", k, len(got), len(v))
		}
	}
	filepath.WalkDir(down, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), "wharf-tmp") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
	// One object to a local file.
	one := filepath.Join(root, "one.bin")
	wharf(t, "cp", "--no-fsync", st+"/big.bin", one).must(t, 0)
	if got := readFile(t, one); got != files["big.bin"] {
		t.Errorf("one.bin: %d bytes, want %d", len(got), len(files["big.bin"]))
	}
	for _, args := range [][]string{
		{"cp", "-r", "--no-fsync", src, st + "/again/"},
		{"cp", "--no-fsync", st + "/a.txt", "-"},
		{"cp", "--no-fsync", "-", filepath.Join(root, "stdin.txt")},
	} {
		r := wharf(t, args...).must(t, 2)
		if !strings.Contains(r.err, "--no-fsync is for copies") || !strings.Contains(r.err, "WHARF_USAGE") {
			t.Errorf("wharf %v: %q", args, r.err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "store", "again")); err == nil {
		t.Errorf("a refused --no-fsync copy wrote %s/again", st)
	}
}
