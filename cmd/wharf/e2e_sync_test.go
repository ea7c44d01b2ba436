package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/internal/testenv"
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

// A sync racing a writer on MinIO, through the binary: the sync lists and plans, then (held
// by the test hook) a writer replaces one destination the sync will replace and creates one
// it will create. Once let go, the sync leaves both as the writer made them, names them,
// removes nothing, and exits 1 with WHARF_SYNC_CONFLICT; the object only in the destination
// is still there.
func TestE2EMinIOSyncNeverOverwritesARacingWriter(t *testing.T) {
	c, ep := minioCLI(t)
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	bucket := "s3://" + randomBucket(t)
	w("mb", bucket).must(t, 0)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a": "a1", "b": "b1", "old": "old!", "writer": "writer's", "z": "z"})
	w("cp", filepath.Join(dir, "a"), bucket+"/src/a").must(t, 0)
	w("cp", filepath.Join(dir, "b"), bucket+"/src/b").must(t, 0)
	w("cp", filepath.Join(dir, "old"), bucket+"/dst/b").must(t, 0)
	w("cp", filepath.Join(dir, "z"), bucket+"/dst/z").must(t, 0)

	hold := filepath.Join(dir, "go")
	cmd := c.command(append(ep, "sync", "--delete", bucket+"/src/", bucket+"/dst/")...)
	cmd.Env = append(cmd.Env, "WHARF_TEST_SYNC_HOLD="+hold)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(hold + ".planned"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the sync never planned: %s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	w("cp", filepath.Join(dir, "writer"), bucket+"/dst/b").must(t, 0) // the sync planned a replace of "old!"
	w("cp", filepath.Join(dir, "writer"), bucket+"/dst/a").must(t, 0) // the sync planned a create
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(errb.String(), "WHARF_SYNC_CONFLICT") ||
		!strings.Contains(errb.String(), "wharf: left "+bucket+"/dst/a") || !strings.Contains(errb.String(), "wharf: left "+bucket+"/dst/b") {
		t.Fatalf("sync racing a writer: exit %d (%v), stderr %q", code, err, errb.String())
	}
	for key, want := range map[string]string{"dst/a": "writer's", "dst/b": "writer's", "dst/z": "z"} {
		if got := w("cat", bucket+"/"+key).must(t, 0).out; got != want {
			t.Errorf("%s holds %q after the race, want %q", key, got, want)
		}
	}
}

// A sync whose source listing fails half-way, through the binary: the first listing request
// of the source's tree passes, every later one fails (past the retries). The sync copies
// nothing and removes nothing: every file of the local destination, including those only
// there, is as it was.
func TestE2EMinIOSyncListingFailedHalfWayRemovesNothing(t *testing.T) {
	c, _ := minioCLI(t)
	srv := testenv.MinIO(t)
	bucket := "s3://" + randomBucket(t)
	c.run(t, "--endpoint", srv.Endpoint, "mb", bucket).must(t, 0)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFiles(t, src, map[string]string{"top.csv": "t", "a/1.csv": "1", "b/2.csv": "2", "c/3.csv": "3"})
	c.run(t, "--endpoint", srv.Endpoint, "cp", "-r", src, bucket+"/data/").must(t, 0)
	dst := filepath.Join(dir, "dst")
	writeFiles(t, dst, map[string]string{"only-here.csv": "keep me", "a/1.csv": "stale"})

	proxy, via := testenv.FaultProxy(t, srv)
	fail := proxy.Inject(faultproxy.Rule{Method: "GET", Query: "list-type=2", Skip: 1, Fault: faultproxy.Status, Status: 500})
	r := c.run(t, "--endpoint", via.Endpoint, "sync", "--delete", bucket+"/data/", dst)
	if r.code == 0 || fail.Fired() == 0 {
		t.Fatalf("sync with its listing failing: exit %d (fault fired %d times), stderr %q", r.code, fail.Fired(), r.err)
	}
	for name, want := range map[string]string{"only-here.csv": "keep me", "a/1.csv": "stale"} {
		if got := readFile(t, filepath.Join(dst, name)); got != want {
			t.Errorf("%s holds %q after the failed sync, want %q", name, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "top.csv")); !os.IsNotExist(err) {
		t.Errorf("top.csv was copied by a sync whose listing failed (%v)", err)
	}
}
