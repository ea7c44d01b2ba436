package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wharf mv through the binary on MinIO: a local tree into a bucket, a prefix to another
// within the bucket (the store copies), one object back to local disk. Each source is gone
// once its move exits 0, and each destination holds the source's bytes; a move into its own
// prefix is refused, exit 2, and removes nothing.
func TestE2EMinIOMove(t *testing.T) {
	c, ep := minioCLI(t)
	bucket := "s3://" + randomBucket(t)
	c.run(t, append(ep, "mb", bucket)...).must(t, 0)
	dir := t.TempDir()
	files := map[string]string{"a.csv": "1,2\n", "sub/b.csv": "3,4\n"}
	writeFiles(t, filepath.Join(dir, "out"), files)

	r := c.run(t, append(ep, "mv", "-r", filepath.Join(dir, "out"), bucket+"/in/")...).must(t, 0)
	if !strings.Contains(r.out, "removed 2 source(s), kept 0") {
		t.Fatalf("mv -r local to store printed %q", r.out)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "sub", "b.csv")); !os.IsNotExist(err) {
		t.Fatalf("a moved local file is still there (%v)", err)
	}

	r = c.run(t, append(ep, "mv", "-r", bucket+"/in", bucket+"/in/again/")...)
	if r.code != 2 || !strings.Contains(r.err, "overlap") {
		t.Fatalf("mv -r into its own prefix: exit %d, stderr %q; want exit 2 naming the overlap", r.code, r.err)
	}

	c.run(t, append(ep, "mv", "-r", bucket+"/in/", bucket+"/archive/")...).must(t, 0)
	for name, body := range files {
		if got := c.run(t, append(ep, "cat", bucket+"/archive/"+name)...).must(t, 0).out; got != body {
			t.Errorf("archive/%s holds %q, want %q", name, got, body)
		}
	}
	if r := c.run(t, append(ep, "du", bucket+"/in/")...).must(t, 0); !strings.HasPrefix(r.out, "0 object(s)") {
		t.Errorf("in/ after the move: %q", r.out)
	}

	back := filepath.Join(dir, "back.csv")
	r = c.run(t, append(ep, "mv", bucket+"/archive/a.csv", back)...).must(t, 0)
	if !strings.HasPrefix(r.out, "moved "+bucket+"/archive/a.csv -> ") || readFile(t, back) != "1,2\n" {
		t.Fatalf("mv of one object printed %q; %s holds %q", r.out, back, readFile(t, back))
	}
	if r := c.run(t, append(ep, "stat", bucket+"/archive/a.csv")...); r.code != 1 || !strings.Contains(r.err, "WHARF_NOT_FOUND") {
		t.Errorf("the moved object: exit %d, stderr %q; want WHARF_NOT_FOUND", r.code, r.err)
	}
}

// wharf mv on the local filesystem: a directory moved into another keeps its names; a move
// of a directory into itself is refused and removes nothing; a dry run changes nothing.
func TestE2EMoveLocal(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "src"), map[string]string{"x.txt": "x", "d/y.txt": "y"})
	c := cli{dir: dir}
	if r := c.run(t, "mv", "-r", "src", "src/inner"); r.code != 2 || !strings.Contains(r.err, "overlap") {
		t.Fatalf("mv -r src src/inner: exit %d, stderr %q", r.code, r.err)
	}
	if r := c.run(t, "mv", "-r", "--dry-run", "src", "dst").must(t, 0); !strings.Contains(r.out, "would copy") {
		t.Fatalf("mv --dry-run printed %q", r.out)
	}
	if readFile(t, filepath.Join(dir, "src", "d", "y.txt")) != "y" {
		t.Fatal("a refused or dry-run move changed the source")
	}
	c.run(t, "mv", "-r", "src", "dst").must(t, 0)
	if readFile(t, filepath.Join(dir, "dst", "d", "y.txt")) != "y" || readFile(t, filepath.Join(dir, "dst", "x.txt")) != "x" {
		t.Fatal("dst does not hold what was moved")
	}
	if _, err := os.Stat(filepath.Join(dir, "src", "x.txt")); !os.IsNotExist(err) {
		t.Fatalf("src/x.txt is still there (%v)", err)
	}
}
