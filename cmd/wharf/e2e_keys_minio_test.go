package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A key is what the user typed: '#', '%', '?', '&' and spaces after the bucket are key bytes,
// never URL syntax, in every command, and what a command prints can be typed back.
func TestE2EAwkwardKeysAreLiteral(t *testing.T) {
	c, ep := minioCLI(t)
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	bucket := "s3://" + randomBucket(t)
	w("mb", bucket).must(t, 0)
	local := t.TempDir()
	keys := []string{"report", "report#v2", "dir%2Ffile", "dir/file", "k/pct%20enc.txt", "q?mark&amp=1.txt", "x#1.csv", "sp ace.txt"}
	for i, k := range keys {
		src := filepath.Join(local, "f"+string(rune('a'+i)))
		writeFiles(t, local, map[string]string{filepath.Base(src): "body of " + k})
		if r := w("cp", src, bucket+"/"+k).must(t, 0); !strings.Contains(r.out, bucket+"/"+k) {
			t.Errorf("cp to %q printed %q, not the key it wrote", k, r.out)
		}
	}
	r := w("ls", "-r", bucket).must(t, 0)
	listed := strings.Split(strings.TrimRight(r.out, "\n"), "\n")
	if len(listed) != len(keys) {
		t.Fatalf("ls -r listed %d keys, want %d:\n%s", len(listed), len(keys), r.out)
	}
	for _, k := range keys {
		if !strings.Contains(r.out, " "+k+"\n") {
			t.Errorf("ls -r does not list %q:\n%s", k, r.out)
		}
		if got := w("cat", bucket+"/"+k).must(t, 0).out; got != "body of "+k {
			t.Errorf("cat %q = %q", k, got)
		}
	}
	// Deleting report#v2 deletes exactly that key, says so, and leaves "report".
	r = w("rm", bucket+"/report#v2").must(t, 0)
	if !strings.Contains(r.out, bucket+"/report#v2") {
		t.Errorf("rm printed %q, not the key it deleted", r.out)
	}
	w("cat", bucket+"/report").must(t, 0)
	if r := w("cat", bucket+"/report#v2"); r.code != 1 || !strings.Contains(r.err, "[WHARF_NOT_FOUND]") {
		t.Errorf("report#v2 after rm: %+v", r)
	}
	// dir%2Ffile is its own key: deleting it leaves dir/file.
	w("rm", bucket+"/dir%2Ffile").must(t, 0)
	if got := w("cat", bucket+"/dir/file").must(t, 0).out; got != "body of dir/file" {
		t.Errorf("dir/file after rm dir%%2Ffile: %q", got)
	}
	// A download names its local file after the key's last segment, byte for byte.
	w("cp", bucket+"/q?mark&amp=1.txt", local+"/down/").must(t, 0)
	if got := readFile(t, filepath.Join(local, "down", "q?mark&amp=1.txt")); got != "body of q?mark&amp=1.txt" {
		t.Errorf("downloaded %q", got)
	}
}
