package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// syncResult is sync's JSON summary: the last line it prints with --format json.
type syncResult struct {
	Copied, Created, Replaced, Unchanged, Removed, Conflicts int
	OnlyInDest                                               int `json:"only_in_destination"`
}

func syncSummaryOf(t *testing.T, out string) syncResult {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var s syncResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil {
		t.Fatalf("sync's last line %q: %v", lines[len(lines)-1], err)
	}
	return s
}

// wharf sync through the binary on MinIO: a local tree to a prefix, then again (nothing
// copied), then after local edits (a file of another size, one of the same size edited
// later, one new, one removed) with --delete; a prefix to another bucket and back to local
// disk; between two S3 prefixes an object of the same size but other bytes at the
// destination is restored (their MD5 ETags differ). The guards: an empty source is refused,
// and --max-delete 0 removes nothing.
func TestE2EMinIOSync(t *testing.T) {
	c, ep := minioCLI(t)
	w := func(args ...string) result {
		t.Helper()
		return c.run(t, append(append(ep, "--format", "json"), args...)...)
	}
	bucket, other := "s3://"+randomBucket(t), "s3://"+randomBucket(t)
	w("mb", bucket).must(t, 0)
	w("mb", other).must(t, 0)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFiles(t, src, map[string]string{"a.csv": "a,1\n", "b.csv": "b,1\n", "sub/c.csv": "c,1\n", "gone.csv": "x\n"})
	past := time.Now().Add(-time.Hour)
	for _, n := range []string{"a.csv", "b.csv", "sub/c.csv", "gone.csv"} {
		if err := os.Chtimes(filepath.Join(src, n), past, past); err != nil {
			t.Fatal(err)
		}
	}

	if s := syncSummaryOf(t, w("sync", src, bucket+"/data/").must(t, 0).out); s.Copied != 4 || s.Created != 4 {
		t.Fatalf("first sync: %+v", s)
	}
	if s := syncSummaryOf(t, w("sync", src, bucket+"/data").must(t, 0).out); s.Copied != 0 || s.Unchanged != 4 {
		t.Fatalf("second sync: %+v, want nothing copied", s)
	}
	writeFiles(t, src, map[string]string{"a.csv": "a,22\n", "b.csv": "b,2\n", "new.csv": "n\n"})
	if err := os.Remove(filepath.Join(src, "gone.csv")); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Minute) // b.csv: the same size, edited after its upload
	if err := os.Chtimes(filepath.Join(src, "b.csv"), future, future); err != nil {
		t.Fatal(err)
	}
	r := w("sync", "--delete", "--max-delete", "0", src, bucket+"/data/")
	if r.code != 1 || !strings.Contains(r.err, "WHARF_SYNC_DELETE_REFUSED") {
		t.Fatalf("--max-delete 0: exit %d, stderr %q", r.code, r.err)
	}
	if s := syncSummaryOf(t, r.out); s.Copied != 3 || s.Replaced != 2 || s.Created != 1 || s.Removed != 0 || s.OnlyInDest != 1 {
		t.Fatalf("sync with a refused delete: %+v", s)
	}
	for _, n := range []string{"a.csv", "b.csv", "sub/c.csv", "new.csv"} { // all older than their copies
		if err := os.Chtimes(filepath.Join(src, n), past, past); err != nil {
			t.Fatal(err)
		}
	}
	r = w("sync", "--delete", src, bucket+"/data/").must(t, 0)
	if s := syncSummaryOf(t, r.out); s.Copied != 0 || s.Removed != 1 || s.Unchanged != 4 || !strings.Contains(r.out, `"removed":"`+bucket+`/data/gone.csv"`) {
		t.Fatalf("sync --delete: %+v\n%s", s, r.out)
	}
	for name, body := range map[string]string{"a.csv": "a,22\n", "b.csv": "b,2\n", "sub/c.csv": "c,1\n", "new.csv": "n\n"} {
		if got := w("cat", bucket+"/data/"+name).must(t, 0).out; got != body {
			t.Errorf("data/%s holds %q, want %q", name, got, body)
		}
	}

	// Store to store: a copy, then a destination of the same size but other bytes, newer than
	// its source, is found changed by its MD5 ETag and restored.
	if s := syncSummaryOf(t, w("sync", bucket+"/data/", other+"/mirror/").must(t, 0).out); s.Copied != 4 {
		t.Fatalf("store to store: %+v", s)
	}
	tamper := filepath.Join(dir, "tamper")
	writeFiles(t, dir, map[string]string{"tamper": "X,9\n"})
	w("cp", tamper, other+"/mirror/sub/c.csv").must(t, 0)
	if s := syncSummaryOf(t, w("sync", bucket+"/data/", other+"/mirror/").must(t, 0).out); s.Copied != 1 || s.Replaced != 1 || s.Unchanged != 3 {
		t.Fatalf("store to store after the tamper: %+v", s)
	}
	if got := w("cat", other+"/mirror/sub/c.csv").must(t, 0).out; got != "c,1\n" {
		t.Errorf("mirror/sub/c.csv holds %q after the sync", got)
	}

	// Store to local disk, twice.
	back := filepath.Join(dir, "back")
	if s := syncSummaryOf(t, w("sync", other+"/mirror", back).must(t, 0).out); s.Copied != 4 {
		t.Fatalf("store to local: %+v", s)
	}
	if readFile(t, filepath.Join(back, "sub", "c.csv")) != "c,1\n" {
		t.Error("back/sub/c.csv does not hold what was synced")
	}

	// Guards: an empty source is refused and removes nothing, even with --delete.
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	r = w("sync", "--delete", empty, bucket+"/data/")
	if r.code != 1 || !strings.Contains(r.err, "WHARF_SYNC_EMPTY_SOURCE") {
		t.Fatalf("empty source: exit %d, stderr %q", r.code, r.err)
	}
	if s := syncSummaryOf(t, w("sync", src, bucket+"/data/").must(t, 0).out); s.Unchanged != 4 {
		t.Fatalf("after the refused empty sync: %+v", s)
	}
}

// wharf sync on the local filesystem: a dry run changes nothing and says what it would do;
// overlapping trees are refused.
func TestE2ESyncLocal(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "src"), map[string]string{"x.txt": "x", "d/y.txt": "y"})
	writeFiles(t, filepath.Join(dir, "dst"), map[string]string{"old.txt": "o"})
	c := cli{dir: dir}
	if r := c.run(t, "sync", "src", "src/d"); r.code != 2 || !strings.Contains(r.err, "overlap") {
		t.Fatalf("sync src src/d: exit %d, stderr %q", r.code, r.err)
	}
	r := c.run(t, "sync", "--delete", "--dry-run", "src", "dst").must(t, 0)
	for _, want := range []string{"would copy src/x.txt -> dst/x.txt (1 bytes, new)", "would remove dst/old.txt", "nothing was changed"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("dry run printed %q, want %q in it", r.out, want)
		}
	}
	if readFile(t, filepath.Join(dir, "dst", "old.txt")) != "o" {
		t.Fatal("a dry run removed a file")
	}
	r = c.run(t, "sync", "--delete", "src", "dst").must(t, 0)
	if !strings.Contains(r.out, "removed dst/old.txt") || readFile(t, filepath.Join(dir, "dst", "d", "y.txt")) != "y" {
		t.Fatalf("sync --delete printed %q", r.out)
	}
	if _, err := os.Stat(filepath.Join(dir, "dst", "old.txt")); !os.IsNotExist(err) {
		t.Fatalf("dst/old.txt is still there (%v)", err)
	}
}
