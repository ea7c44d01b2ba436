package transfer

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

func TestLocalPathKeys(t *testing.T) {
	l := NewLocal(t.TempDir())
	for _, k := range []string{"a/../b", "a/./b", "a//b", "./a", "a/", "/a", "", "a\x00b", ".."} {
		if _, err := l.Path(k); !errors.Is(err, store.ErrKeyInvalid) || !strings.Contains(err.Error(), "cannot be the name of a file") {
			t.Errorf("Path(%q) = %v, want ErrKeyInvalid", k, err)
		}
	}
	for _, k := range []string{`back\slash`, "tab\there", "a/b.c", "..a/b..", "sp ace/#%?"} {
		p, err := l.Path(k)
		if err != nil || filepath.Base(p) != filepath.Base(k) {
			t.Errorf("Path(%q) = %q, %v: the name must be kept byte for byte", k, p, err)
		}
	}
}

func TestLocalWalkPassesOver(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	os.Symlink("missing", filepath.Join(dir, "broken"))
	os.Symlink("loop", filepath.Join(dir, "loop"))
	os.Symlink(".", filepath.Join(dir, "dirlink"))
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]error{}
	for o, err := range NewLocal(dir).Walk(context.Background(), "") {
		if err != nil && !Passed(err) {
			t.Fatalf("walk stopped at %v", err)
		}
		got[o.Key] = err
	}
	want := map[string]error{"a": nil, "broken": ErrLinkBroken, "loop": ErrLinkBroken, "pipe": ErrSpecialFile}
	if len(got) != len(want) {
		t.Errorf("walk yielded %v, want %v", got, want)
	}
	for k, kind := range want {
		if err, ok := got[k]; !ok || (kind == nil) != (err == nil) || kind != nil && !errors.Is(err, kind) {
			t.Errorf("%s: %v, want %v", k, err, kind)
		}
	}
}

// shrinking truncates a file once the put has read from it (and, when to > 1, makes it grow
// past its size again), then puts as usual.
type shrinking struct {
	*store.Store
	path string
	to   int64
}

func (s *shrinking) Put(ctx context.Context, key string, body io.Reader, o *store.PutOptions) (store.ObjectInfo, error) {
	var one [1]byte
	if _, err := io.ReadFull(body, one[:]); err != nil {
		return store.ObjectInfo{}, err
	}
	if err := os.Truncate(s.path, s.to); err != nil {
		return store.ObjectInfo{}, err
	}
	if s.to > 1 {
		// It grows again past its size.
		f, _ := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0)
		f.Write(make([]byte, 200))
		f.Close()
	}
	return s.Store.Put(ctx, key, body, o)
}

func TestRunLocalFileChanged(t *testing.T) {
	for _, to := range []int64{10, 50} {
		dir := t.TempDir()
		path := filepath.Join(dir, "f")
		os.WriteFile(path, make([]byte, 100), 0o644)
		m := store.New(mem.New(), nil)
		_, err := Run(context.Background(), NewLocal(dir), &shrinking{m, path, to}, []Task{{Src: "f", Dst: "f", Size: 100}}, Options{})
		if !errors.Is(err, ErrLocalChanged) || !strings.Contains(err.Error(), path) || errors.Is(err, store.ErrUnavailable) {
			t.Errorf("truncated to %d: %v, want ErrLocalChanged naming %s", to, err, path)
		}
		if _, err := m.Head(context.Background(), "f"); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("truncated to %d: an object was left (%v)", to, err)
		}
	}
}
