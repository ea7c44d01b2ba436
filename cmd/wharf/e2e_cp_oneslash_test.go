package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A store URL with one slash (s3:/b/x) is refused, not taken for the local path ./s3:/b/x:
// cp writes nothing there and rm -r deletes nothing there. Written ./s3:/…, it is a local
// path.
func TestE2EOneSlashURLIsRefusedNotTakenForALocalPath(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "hello", "s3:/b/keep.txt": "mine"})
	c := cli{dir: dir}

	r := c.run(t, "cp", "f.txt", "s3:/b/x")
	if r.code != 2 || !strings.Contains(r.err, "WHARF_CONFIG_INVALID") || !strings.Contains(r.err, "./s3:/b/x") {
		t.Fatalf("cp f.txt s3:/b/x: exit %d, stderr %q; want exit 2 naming WHARF_CONFIG_INVALID and ./s3:/b/x", r.code, r.err)
	}
	if _, err := os.Stat(filepath.Join(dir, "s3:", "b", "x")); !os.IsNotExist(err) {
		t.Fatalf("cp to s3:/b/x wrote a local file (%v)", err)
	}

	r = c.run(t, "rm", "-r", "s3:/b/")
	if r.code != 2 || !strings.Contains(r.err, "WHARF_CONFIG_INVALID") {
		t.Fatalf("rm -r s3:/b/: exit %d, stderr %q; want exit 2", r.code, r.err)
	}
	if got := readFile(t, filepath.Join(dir, "s3:", "b", "keep.txt")); got != "mine" {
		t.Fatalf("rm -r s3:/b/ touched the local file: %q", got)
	}

	if r = c.run(t, "cp", "f.txt", "./s3:/b/x"); r.code != 0 {
		t.Fatalf("cp f.txt ./s3:/b/x: exit %d, stderr %q", r.code, r.err)
	}
	if got := readFile(t, filepath.Join(dir, "s3:", "b", "x")); got != "hello" {
		t.Fatalf("./s3:/b/x holds %q", got)
	}
}
