package transfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

func put(t *testing.T, s *store.Store, key, body string) {
	t.Helper()
	if _, err := s.Put(context.Background(), key, strings.NewReader(body), &store.PutOptions{Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, s Source, key string) string {
	t.Helper()
	o, err := s.Get(context.Background(), key, nil)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tasksOf lists every object under src's root as tasks to the same key under prefix.
func tasksOf(t *testing.T, l *Local, prefix string) []Task {
	t.Helper()
	var out []Task
	for o, err := range l.Walk(context.Background(), "") {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Task{Src: o.Key, Dst: prefix + o.Key, Size: o.Size})
	}
	return out
}

func TestRunLocalToStoreAndBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	want := map[string]string{}
	for i := range 40 {
		name := fmt.Sprintf("d%d/f%02d.txt", i%3, i)
		want[name] = strings.Repeat(fmt.Sprint(i), i*100)
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(want[name]), 0o644)
	}
	m := store.New(mem.New(), nil)
	sum, err := Run(ctx, NewLocal(dir), m, tasksOf(t, NewLocal(dir), "up/"), Options{Jobs: 7})
	if err != nil || sum.Files != 40 {
		t.Fatalf("up: %+v %v", sum, err)
	}
	down := t.TempDir()
	var tasks []Task
	for name := range want {
		tasks = append(tasks, Task{Src: "up/" + name, Dst: name, Size: -1})
	}
	// A tiny part size: the larger files download as parallel ranged reads.
	if _, err := Run(ctx, m, NewLocal(down), tasks, Options{Jobs: 3, PartSize: 512, Parts: 3}); err != nil {
		t.Fatal(err)
	}
	for name, body := range want {
		if got := get(t, m, "up/"+name); got != body {
			t.Errorf("stored %s: %d bytes, want %d", name, len(got), len(body))
		}
		if got := get(t, NewLocal(down), name); got != body {
			t.Errorf("downloaded %s: %d bytes, want %d", name, len(got), len(body))
		}
	}
}

func TestRunParallelDownload(t *testing.T) {
	m := store.New(mem.New(), nil)
	body := strings.Repeat("0123456789", 1000)
	put(t, m, "big", body)
	down := t.TempDir()
	l := NewLocal(down)
	tasks := []Task{{Src: "big", Dst: "sub/big", Size: int64(len(body))}}
	if _, err := Run(context.Background(), m, l, tasks, Options{PartSize: 1000, Parts: 4}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, l, "sub/big"); got != body {
		t.Errorf("downloaded %d bytes, differs", len(got))
	}
	if leftovers(t, filepath.Join(down, "sub")) != 1 {
		t.Error("temporary files left behind")
	}
}

func TestRunIfAbsentRefusesAndGoesOn(t *testing.T) {
	m := store.New(mem.New(), nil)
	put(t, m, "src/a", "new-a")
	put(t, m, "src/b", "new-b")
	put(t, m, "src/c", "new-c")
	put(t, m, "dst/a", "old-a")
	put(t, m, "dst/c", "old-c")
	tasks := []Task{{Src: "src/a", Dst: "dst/a", Size: 5}, {Src: "src/b", Dst: "dst/b", Size: 5}, {Src: "src/c", Dst: "dst/c", Size: 5}}
	sum, err := Run(context.Background(), m, m, tasks, Options{IfAbsent: true, Jobs: 1})
	if !errors.Is(err, store.ErrPreconditionFailed) || sum.Refused != 2 || sum.Files != 1 {
		t.Fatalf("Run = %+v, %v; want 2 refused, 1 copied, ErrPreconditionFailed", sum, err)
	}
	for k, v := range map[string]string{"dst/a": "old-a", "dst/b": "new-b", "dst/c": "old-c"} {
		if got := get(t, m, k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

// failing fails every put of one key.
type failing struct {
	*store.Store
	key string
}

var errBoom = errors.New("boom")

func (f *failing) Put(ctx context.Context, key string, body io.Reader, o *store.PutOptions) (store.ObjectInfo, error) {
	if key == f.key {
		return store.ObjectInfo{}, &store.Error{Op: "put", Key: key, Kind: store.ErrForbidden, Err: errBoom}
	}
	return f.Store.Put(ctx, key, body, o)
}

func TestRunStopsAtFirstFailure(t *testing.T) {
	m := store.New(mem.New(), nil)
	var tasks []Task
	for i := range 200 {
		k := fmt.Sprintf("k%03d", i)
		put(t, m, k, "x")
		tasks = append(tasks, Task{Src: k, Dst: "copy/" + k, Size: 1})
	}
	sum, err := Run(context.Background(), m, &failing{m, "copy/k005"}, tasks, Options{Jobs: 2})
	if !errors.Is(err, errBoom) || !errors.Is(err, store.ErrForbidden) {
		t.Fatalf("err = %v, want the failing put's", err)
	}
	if sum.Files >= 199 {
		t.Errorf("copied %d files after the failure: it should stop", sum.Files)
	}
}

// slow yields its bytes one chunk at a time and cancels ctx halfway.
type slow struct {
	n      int
	cancel context.CancelFunc
}

func (s *slow) Read(p []byte) (int, error) {
	s.n++
	if s.n == 3 {
		s.cancel()
	}
	return copy(p, bytes.Repeat([]byte("z"), 10)), nil
}

func TestLocalPutCancelledLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	l := NewLocal(dir)
	os.WriteFile(filepath.Join(dir, "keep"), []byte("old"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := l.Put(ctx, "keep", &slow{cancel: cancel}, &store.PutOptions{Size: -1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if got := get(t, l, "keep"); got != "old" || leftovers(t, dir) != 1 {
		t.Errorf("after a cancelled put: keep=%q, %d entries", got, leftovers(t, dir))
	}
}

func TestLocalPutSizeMismatch(t *testing.T) {
	dir := t.TempDir()
	l := NewLocal(dir)
	_, err := l.Put(context.Background(), "a", strings.NewReader("short"), &store.PutOptions{Size: 10})
	if !errors.Is(err, errSize) || !strings.Contains(err.Error(), filepath.Join(dir, "a")) {
		t.Fatalf("err = %v, want a size mismatch naming the path", err)
	}
	if leftovers(t, dir) != 0 {
		t.Error("a short body left a file")
	}
}

func TestLocalRefusesEscapingKeys(t *testing.T) {
	l := NewLocal(t.TempDir())
	for _, k := range []string{"../x", "a/../../x", "/etc/passwd", ""} {
		if _, err := l.Put(context.Background(), k, strings.NewReader("x"), nil); !errors.Is(err, store.ErrKeyInvalid) {
			t.Errorf("Put(%q) = %v, want ErrKeyInvalid", k, err)
		}
	}
}

func TestLocalWalkMissing(t *testing.T) {
	l := NewLocal(filepath.Join(t.TempDir(), "nope"))
	for _, err := range l.Walk(context.Background(), "") {
		if !errors.Is(err, store.ErrNotExist) || !strings.Contains(err.Error(), "nope") {
			t.Errorf("walk of a missing dir: %v", err)
		}
		return
	}
	t.Error("walk of a missing dir yielded nothing")
}

func leftovers(t *testing.T, dir string) int {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(des)
}
