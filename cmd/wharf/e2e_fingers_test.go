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
	if r.code != 2 || !strings.Contains(r.err, "WHARF_CONFIG_INVALID") || !strings.Contains(r.err, "./s3:/…") {
		t.Fatalf("cp f.txt s3:/b/x: exit %d, stderr %q; want exit 2 naming WHARF_CONFIG_INVALID and ./s3:/…", r.code, r.err)
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

// What aws-cli's users type: wharf --version prints what wharf version prints, and ls -H
// shows sizes as people read them.
func TestE2EVersionFlagAndHumanSizes(t *testing.T) {
	v, flag := wharf(t, "version").must(t, 0), wharf(t, "--version").must(t, 0)
	if v.out == "" || flag.out != v.out {
		t.Fatalf("wharf --version printed %q, wharf version %q", flag.out, v.out)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"big.bin": strings.Repeat("x", 3<<20/2), "small.txt": "hello"})
	r := wharf(t, "ls", "-H", dir).must(t, 0)
	if !strings.Contains(r.out, " 1.5 MiB big.bin") || !strings.Contains(r.out, " 5 B small.txt") {
		t.Fatalf("ls -H printed %q", r.out)
	}
	if r := wharf(t, "ls", dir).must(t, 0); !strings.Contains(r.out, " 1572864 big.bin") {
		t.Fatalf("ls printed %q", r.out)
	}
}

// wharf du counts what rm -r would remove: every key under logs/, never logs-old/.
func TestE2EMinIODuCountsThePrefix(t *testing.T) {
	c, ep := minioCLI(t)
	bucket := "s3://" + randomBucket(t)
	c.run(t, append(ep, "mb", bucket)...).must(t, 0)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a": "12345", "b": "678", "old": "xxxxxxxx"})
	for src, key := range map[string]string{"a": "logs/a", "b": "logs/sub/b", "old": "logs-old/c"} {
		c.run(t, append(ep, "cp", filepath.Join(dir, src), bucket+"/"+key)...).must(t, 0)
	}
	for url, want := range map[string]string{
		bucket + "/logs":  "2 object(s), 8 bytes (8 B) under " + bucket + "/logs/\n",
		bucket + "/logs/": "2 object(s), 8 bytes (8 B) under " + bucket + "/logs/\n",
		bucket:            "3 object(s), 16 bytes (16 B) under " + bucket + "\n",
		bucket + "/none/": "0 object(s), 0 bytes (0 B) under " + bucket + "/none/\n",
	} {
		if r := c.run(t, append(ep, "du", url)...).must(t, 0); r.out != want {
			t.Errorf("du %s printed %q, want %q", url, r.out, want)
		}
	}
	r := c.run(t, append(ep, "--format", "json", "du", bucket+"/logs")...).must(t, 0)
	if want := `{"url":"` + bucket + `/logs/","objects":2,"bytes":8}` + "\n"; r.out != want {
		t.Errorf("du --format json printed %q, want %q", r.out, want)
	}
	if r := c.run(t, append(ep, "du", "s3://"+randomBucket(t)+"/x/")...); r.code == 0 || !strings.Contains(r.err, "WHARF_BUCKET_MISSING") {
		t.Errorf("du of a missing bucket: exit %d, stderr %q", r.code, r.err)
	}
}
