package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Wildcards and --include/--exclude through the binary on MinIO, for ls, cp, sync, mv and
// rm: each takes exactly the keys the wildcard and the rules choose; a filter without -r is
// refused (exit 2).
func TestE2EMinIOWildcardsAndFilters(t *testing.T) {
	c, ep := minioCLI(t)
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	bucket := "s3://" + randomBucket(t)
	w("mb", bucket).must(t, 0)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFiles(t, src, map[string]string{
		"2024-01/a.gz": "a", "2024-01/b.txt": "b", "2024-02/x/c.gz": "c", "2023-12/d.gz": "d", "e.gz": "e", "f.tmp": "f",
	})
	ageFiles(t, src) // older than their uploads, which S3 dates to the second
	w("cp", "-r", src, bucket+"/logs/").must(t, 0)

	keysOf := func(out string) []string {
		var keys []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) > 0 {
				keys = append(keys, f[len(f)-1])
			}
		}
		slices.Sort(keys)
		return keys
	}
	if got := keysOf(w("ls", bucket+"/logs/2024-*/*.gz").must(t, 0).out); !slices.Equal(got, []string{"logs/2024-01/a.gz", "logs/2024-02/x/c.gz"}) {
		t.Errorf("ls with a wildcard: %q", got)
	}
	if got := keysOf(w("ls", "-r", "--exclude", "*", "--include", "*.gz", "--exclude", "2023-*", bucket+"/logs/").must(t, 0).out); !slices.Equal(got, []string{"logs/2024-01/a.gz", "logs/2024-02/x/c.gz", "logs/e.gz"}) {
		t.Errorf("ls -r with rules: %q", got)
	}
	if r := w("ls", "--exclude", "*.gz", bucket+"/logs/"); r.code != 2 {
		t.Errorf("ls --exclude without -r: exit %d, stderr %q; want 2", r.code, r.err)
	}

	down := filepath.Join(dir, "down")
	w("cp", bucket+"/logs/2024-*/*.gz", down+"/").must(t, 0)
	for name, want := range map[string]bool{"2024-01/a.gz": true, "2024-02/x/c.gz": true, "2024-01/b.txt": false, "e.gz": false} {
		if _, err := os.Stat(filepath.Join(down, name)); (err == nil) != want {
			t.Errorf("cp with a wildcard: %s there: %v, want %v", name, err == nil, want)
		}
	}

	r := w("--format", "json", "sync", "--delete", "--exclude", "*.tmp", src, bucket+"/mirror/").must(t, 0)
	if s := syncSummaryOf(t, r.out); s.Copied != 5 {
		t.Fatalf("sync --exclude: %+v", s)
	}
	w("cp", filepath.Join(src, "f.tmp"), bucket+"/mirror/keep.tmp").must(t, 0) // left out by the filter: never removed
	r = w("--format", "json", "sync", "--delete", "--exclude", "*.tmp", "--exclude", "2023-*", src, bucket+"/mirror/").must(t, 0)
	if s := syncSummaryOf(t, r.out); s.Removed != 0 || s.Copied != 0 {
		t.Fatalf("sync with 2023-* excluded too: %+v (excluded keys are neither compared nor removed)", s)
	}
	if got := w("cat", bucket+"/mirror/keep.tmp").must(t, 0).out; got != "f" {
		t.Errorf("mirror/keep.tmp: %q", got)
	}

	w("mv", "-r", "--include", "*", "--exclude", "*.txt", bucket+"/logs/2024-01/", bucket+"/moved/").must(t, 0)
	if got := keysOf(w("ls", "-r", bucket+"/logs/2024-01/").must(t, 0).out); !slices.Equal(got, []string{"logs/2024-01/b.txt"}) {
		t.Errorf("mv --exclude left %q under logs/2024-01/", got)
	}

	if r := w("rm", "--exclude", "*", bucket+"/logs/e.gz"); r.code != 2 {
		t.Errorf("rm --exclude without -r: exit %d; want 2", r.code)
	}
	r = w("rm", bucket+"/logs/*.gz").must(t, 0)
	if !strings.Contains(r.out, "removed 3 object(s)") {
		t.Errorf("rm with a wildcard printed %q", r.out)
	}
	if got := keysOf(w("ls", "-r", bucket+"/logs/").must(t, 0).out); !slices.Equal(got, []string{"logs/2024-01/b.txt", "logs/f.tmp"}) {
		t.Errorf("after rm *.gz: %q", got)
	}
}

// ageFiles dates every file under dir an hour back.
func ageFiles(t *testing.T, dir string) {
	t.Helper()
	past := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(path, past, past)
	})
	if err != nil {
		t.Fatal(err)
	}
}
