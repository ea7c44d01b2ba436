package transfer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

// A file whose rename fails (its name is a non-empty directory) fails the run naming the
// path, and no temporary file is left; the other files are complete.
func TestRunCommitFailureNamesPathLeavesNoTemp(t *testing.T) {
	m := store.New(mem.New(), nil)
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
	p, _, err := l.write(context.Background(), "x", strings.NewReader("complete"), nil, nil)
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
	m := store.New(mem.New(), nil)
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

// Small files queued while a syncfs runs share the next one: 65 files, two syncs. Each sync
// goes through the batch's file created first (a sync reports the write errors that came
// after its file was opened), whatever order the files were queued in. Each file is complete
// under its final name, with no temporary file left.
func TestBatchCommitSharesOneSync(t *testing.T) {
	if !haveSyncFS {
		t.Skip("no syncfs(2) here: every file is fsynced on its own")
	}
	dir := t.TempDir()
	l := NewLocal(dir)
	started, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	var names [2]string // the file each sync was given
	batchSync = func(f *os.File) error {
		n := calls.Add(1)
		if n <= 2 {
			names[n-1] = filepath.Base(f.Name())
		}
		if n == 1 {
			close(started)
			<-release // hold the first batch until every other file is queued
		}
		return syncFS(f)
	}
	t.Cleanup(func() { batchSync = syncFS })
	n := 1 + batchMax
	jobs := make([]commitJob, n)
	var done sync.WaitGroup
	for i := range n { // created in order: f000, f001, ...
		key := fmt.Sprintf("f%03d", i)
		p, _, err := l.write(context.Background(), key, strings.NewReader("body-"+key), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		done.Add(1)
		jobs[i] = commitJob{p: p, done: func(err error) {
			defer done.Done()
			if err != nil {
				t.Errorf("%s: %v", key, err)
			}
		}}
	}
	c := startCommitters(context.Background(), 2, 1)
	c.submit(context.Background(), jobs[0])
	<-started
	for i := n - 1; i >= 1; i-- { // queued last created first
		c.submit(context.Background(), jobs[i])
	}
	close(release)
	c.wait()
	done.Wait()
	if got := calls.Load(); got != 2 {
		t.Errorf("%d files took %d syncs, want 2 (one held, then one for the rest)", n, got)
	}
	if !strings.HasPrefix(names[0], ".f000.") || !strings.HasPrefix(names[1], ".f001.") {
		t.Errorf("synced through %q, want each batch's first created file (f000, then f001)", names)
	}
	for i := range n {
		key := fmt.Sprintf("f%03d", i)
		if got := get(t, l, key); got != "body-"+key {
			t.Errorf("%s = %q", key, got)
		}
	}
	if got := leftovers(t, dir); got != n {
		t.Errorf("%d entries, want the %d files alone", got, n)
	}
}

// Should the shared sync fail, each file of the batch is fsynced on its own and still lands
// complete; a file above batchFileSize never waits for a batch.
func TestBatchCommitSyncFailureFallsBack(t *testing.T) {
	dir := t.TempDir()
	l := NewLocal(dir)
	var calls atomic.Int32
	batchSync = func(*os.File) error { calls.Add(1); return errors.New("syncfs failed") }
	t.Cleanup(func() { batchSync = syncFS })
	m := store.New(mem.New(), nil)
	big := strings.Repeat("b", batchFileSize+1)
	put(t, m, "big", big)
	tasks := []Task{{Src: "big", Dst: "big", Size: int64(len(big))}}
	for i := range 20 {
		k := fmt.Sprintf("s%02d", i)
		put(t, m, k, k)
		tasks = append(tasks, Task{Src: k, Dst: k, Size: int64(len(k))})
	}
	if _, err := Run(context.Background(), m, l, tasks, Options{Jobs: 4}); err != nil {
		t.Fatal(err)
	}
	if haveSyncFS && calls.Load() == 0 {
		t.Error("the small files never went through a batch")
	}
	if got := get(t, l, "big"); got != big {
		t.Errorf("big: %d bytes, want %d", len(got), len(big))
	}
	for _, tk := range tasks[1:] {
		if got := get(t, l, tk.Dst); got != tk.Src {
			t.Errorf("%s = %q", tk.Dst, got)
		}
	}
}
