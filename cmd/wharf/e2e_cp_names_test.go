package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EMinIONamesWhatItReplaces: every command that deletes or overwrites names each key it
// acted on: cp -r a line per file written (as JSON too), rm and rm -r a line per key removed.
func TestE2EMinIONamesWhatItReplaces(t *testing.T) {
	c, ep := minioCLI(t)
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	bucket := "s3://" + randomBucket(t)
	w("mb", bucket).must(t, 0)
	src := t.TempDir()
	writeFiles(t, src, tree)
	w("cp", "-r", src, bucket+"/t/").must(t, 0)
	r := w("cp", "-r", src, bucket+"/t/").must(t, 0) // every object replaced
	for k := range tree {
		if line := "copied " + filepath.Join(src, k) + " -> " + bucket + "/t/" + k + " ("; !strings.Contains(r.out, line) {
			t.Errorf("cp -r does not name %s:\n%s", k, r.out)
		}
	}
	r = w("cp", "-r", "--format", "json", src, bucket+"/t/").must(t, 0)
	if n := strings.Count(r.out, `"destination":"`+bucket+`/t/`); n != len(tree) {
		t.Errorf("cp -r --format json names %d destinations, want %d:\n%s", n, len(tree), r.out)
	}
	if !strings.Contains(r.out, `"files":4`) {
		t.Errorf("cp -r --format json has no summary:\n%s", r.out)
	}

	r = w("rm", bucket+"/t/a.txt").must(t, 0)
	if !strings.Contains(r.out, "removed "+bucket+"/t/a.txt\n") {
		t.Errorf("rm does not name the key:\n%s", r.out)
	}
	r = w("rm", "-r", bucket+"/t/").must(t, 0)
	for k := range tree {
		if k != "a.txt" && !strings.Contains(r.out, "removed "+bucket+"/t/"+k+"\n") {
			t.Errorf("rm -r does not name %s:\n%s", k, r.out)
		}
	}
	if !strings.Contains(r.out, "removed 3 object(s)") {
		t.Errorf("rm -r summary:\n%s", r.out)
	}
}
