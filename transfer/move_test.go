package transfer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
)

// replacer is a Progress that replaces one source after its copy is done and before the
// move removes it, as a writer racing the move would.
type replacer struct {
	st  *store.Store
	key string
}

func (replacer) Bytes(int64) {}

func (r replacer) Done(t Task, _ store.ObjectInfo, err error) {
	if err == nil && t.Src == r.key {
		if _, err := r.st.Put(context.Background(), r.key, strings.NewReader("newer"), &store.PutOptions{Size: 5}); err != nil {
			panic(err)
		}
	}
}

// TestMoveRemovesOnlyWhatItCopied: a tree moved between prefixes leaves each destination
// with its bytes and removes its source, except the one a writer replaced after its copy,
// which is kept, named, and ends the move with ErrSourceKept.
func TestMoveRemovesOnlyWhatItCopied(t *testing.T) {
	ctx := context.Background()
	m, err := store.Open(ctx, "mem://move-tree", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, k := range []string{"in/a", "in/b", "in/c/d"} {
		put(t, m, k, k)
	}
	p, err := PlanCopy(ctx, testStores, "mem://move-tree/in", "mem://move-tree/out/", CopyOptions{Recursive: true, Options: Options{Jobs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var removed, kept []string
	sum, err := p.Move(ctx, replacer{st: m, key: "in/b"}, Move{
		Removed: func(n string) { removed = append(removed, n) },
		Kept:    func(n string, err error) { kept = append(kept, n) },
	})
	if !errors.Is(err, ErrSourceKept) || sum.Removed != 2 || sum.Kept != 1 {
		t.Fatalf("Move = %+v, %v; want 2 removed, 1 kept, ErrSourceKept", sum, err)
	}
	slices.Sort(removed)
	if !slices.Equal(removed, []string{"mem://move-tree/in/a", "mem://move-tree/in/c/d"}) || !slices.Equal(kept, []string{"mem://move-tree/in/b"}) {
		t.Errorf("removed %q, kept %q", removed, kept)
	}
	for k, want := range map[string]string{"out/a": "in/a", "out/b": "in/b", "out/c/d": "in/c/d", "in/b": "newer"} {
		if got := get(t, m, k); got != want {
			t.Errorf("%s holds %q, want %q", k, got, want)
		}
	}
	for _, k := range []string{"in/a", "in/c/d"} {
		if _, err := m.Head(ctx, k); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("source %s after the move: %v, want ErrNotExist", k, err)
		}
	}
}

// TestMoveRefusesOverlap: a move onto itself, or into or out of its own prefix or directory,
// is refused before anything is copied (copying and then removing would destroy it).
func TestMoveRefusesOverlap(t *testing.T) {
	ctx := context.Background()
	m, err := store.Open(ctx, "mem://move-overlap", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	put(t, m, "in/a", "a")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("f"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link") // the same directory under another name
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		src, dst  string
		recursive bool
	}{
		{"mem://move-overlap/in/a", "mem://move-overlap/in/a", false},
		{"mem://move-overlap/in", "mem://move-overlap/in/sub", true},
		{"mem://move-overlap/in/", "mem://move-overlap/", true},
		{dir, filepath.Join(dir, "inner"), true},
		{dir, filepath.Join(link, "new", "inner"), true},
	} {
		p, err := PlanCopy(ctx, testStores, c.src, c.dst, CopyOptions{Recursive: c.recursive})
		if err != nil {
			t.Fatalf("plan %s -> %s: %v", c.src, c.dst, err)
		}
		_, err = p.Move(ctx, nil, Move{})
		p.Close()
		var u *UsageError
		if !errors.As(err, &u) {
			t.Errorf("move %s -> %s: %v, want a usage error", c.src, c.dst, err)
		}
	}
	if got := get(t, m, "in/a"); got != "a" {
		t.Errorf("in/a holds %q after the refused moves", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "f")); err != nil {
		t.Errorf("the local source after the refused move: %v", err)
	}
}

// TestMoveLocalFile: one local file moved to a store is there and gone from the disk.
func TestMoveLocalFile(t *testing.T) {
	ctx := context.Background()
	m, err := store.Open(ctx, "mem://move-file", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	src := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(src, []byte("x,y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := PlanCopy(ctx, testStores, src, "mem://move-file/in/", CopyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var removed []string
	sum, err := p.Move(ctx, nil, Move{Removed: func(n string) { removed = append(removed, n) }})
	if err != nil || sum.Removed != 1 || !slices.Equal(removed, []string{src}) {
		t.Fatalf("Move = %+v, %v, removed %q", sum, err, removed)
	}
	if got := get(t, m, "in/a.csv"); got != "x,y\n" {
		t.Errorf("in/a.csv holds %q", got)
	}
	if _, err := os.Stat(src); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the source after the move: %v, want it gone", err)
	}
}
