package transfer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store/mem"
)

// A file whose rename fails (its name is a non-empty directory) fails the run naming the
// path, and no temporary file is left; the other files are complete.
func TestRunCommitFailureNamesPathLeavesNoTemp(t *testing.T) {
	m := mem.New()
	var tasks []Task
	for _, k := range []string{"a", "b", "c", "d"} {
		put(t, m, k, "body-"+k)
		tasks = append(tasks, Task{Src: k, Dst: k, Size: 6})
	}
	down := t.TempDir()
	os.MkdirAll(filepath.Join(down, "c", "inside"), 0o755)
	_, err := Run(context.Background(), m, NewLocal(down), tasks, Options{Jobs: 1, Committers: 1})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(down, "c")) {
		t.Fatalf("err = %v, want a rename failure naming %s", err, filepath.Join(down, "c"))
	}
	des, _ := os.ReadDir(down)
	for _, de := range des {
		if strings.Contains(de.Name(), ".wharf-tmp-") {
			t.Errorf("temporary file %s left behind", de.Name())
		}
		if !de.IsDir() {
			if got := get(t, NewLocal(down), de.Name()); got != "body-"+de.Name() {
				t.Errorf("%s = %q: a partial file under its final name", de.Name(), got)
			}
		}
	}
}

// A file queued for commit when the run is cancelled is removed, never renamed into place,
// and its done hears the context's error.
func TestCommittersCancelledRemoveQueued(t *testing.T) {
	dir := t.TempDir()
	l := NewLocal(dir)
	p, _, err := l.write(context.Background(), "x", strings.NewReader("complete"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := startCommitters(ctx, 1, 1)
	var got error
	c.submit(ctx, commitJob{p: p, done: func(err error) { got = err }})
	c.wait()
	if !errors.Is(got, context.Canceled) {
		t.Errorf("done heard %v, want context.Canceled", got)
	}
	if n := leftovers(t, dir); n != 0 {
		t.Errorf("%d entries left after a cancelled commit, want none", n)
	}
}

// Run returns only once every file is synced and in place: all of them, at once.
func TestRunWaitsForEveryCommit(t *testing.T) {
	m := mem.New()
	var tasks []Task
	for i := range 300 {
		k := string(rune('a'+i%26)) + "/" + strings.Repeat("k", 1+i/26) + string(rune('a'+i%26))
		put(t, m, k, k)
		tasks = append(tasks, Task{Src: k, Dst: k, Size: int64(len(k))})
	}
	down := t.TempDir()
	sum, err := Run(context.Background(), m, NewLocal(down), tasks, Options{Jobs: 16, Committers: 3})
	if err != nil || sum.Files != len(tasks) {
		t.Fatalf("Run = %+v, %v", sum, err)
	}
	for _, tk := range tasks {
		b, err := os.ReadFile(filepath.Join(down, filepath.FromSlash(tk.Dst)))
		if err != nil || string(b) != tk.Src {
			t.Fatalf("%s after Run: %q, %v", tk.Dst, b, err)
		}
	}
}
