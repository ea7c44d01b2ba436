package file_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/file"
)

func TestMissingRoot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	s, err := file.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"get":    func() error { _, err := s.Get(ctx, "k", &driver.GetOptions{}); return err },
		"head":   func() error { _, err := s.Head(ctx, "k"); return err },
		"list":   func() error { _, err := s.List(ctx, &driver.ListOptions{}); return err },
		"put":    func() error { _, err := s.Put(ctx, "k", strings.NewReader("x"), &driver.PutOptions{}); return err },
		"delete": func() error { return s.Delete(ctx, "k", &driver.DeleteOptions{}) },
		"copy":   func() error { _, err := s.Copy(ctx, "k", "j", &driver.PutOptions{}); return err },
	}
	for op, call := range calls {
		err := call()
		if !errors.Is(err, driver.ErrBucketMissing) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: err = %v, want ErrBucketMissing naming %s", op, err, dir)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a failed put created the root: %v", err)
	}
	if err := s.MakeBucket(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.MakeBucket(ctx); err != nil {
		t.Fatalf("second MakeBucket: %v", err)
	}
	put(t, s, "k", "v", nil)
	if got := read(t, s, "k", nil); got != "v" {
		t.Fatalf("after MakeBucket: %q", got)
	}
}

// A store opened with CreateDir reads its missing root as empty and makes it at the first
// write; the root is not made by a read, and a missing key is missing the same way.
func TestMissingRootMadeOnFirstWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	s, err := store.Open(ctx, dir, &store.Config{CreateDir: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(ctx, "k"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("head: err = %v, want ErrNotExist", err)
	}
	if _, err := s.Get(ctx, "k", nil); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("get: err = %v, want ErrNotExist", err)
	}
	if page, err := s.List(ctx, &store.ListOptions{}); err != nil || len(page.Objects) != 0 {
		t.Errorf("list: %v, %v; want an empty page", page, err)
	}
	if err := s.Delete(ctx, "k", nil); err != nil {
		t.Errorf("delete: %v", err)
	}
	if err := s.Delete(ctx, "k", &store.DeleteOptions{IfMatch: `"x"`}); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Errorf("conditional delete: err = %v, want ErrPreconditionFailed", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a read made the root: %v", err)
	}
	if _, err := s.Put(ctx, "a/k", strings.NewReader("v"), &store.PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "a", "k")); err != nil || string(got) != "v" {
		t.Fatalf("after the first write: %q, %v", got, err)
	}
	if p, ok := s.LocalPath("a/k"); !ok || p != filepath.Join(dir, "a", "k") {
		t.Errorf("LocalPath = %q, %v", p, ok)
	}
	loc, err := store.ParseURL("file://" + filepath.ToSlash(dir) + "/a/k")
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := loc.LocalPath(); !ok || p != filepath.Join(dir, "a", "k") {
		t.Errorf("Location.LocalPath = %q, %v", p, ok)
	}
}

func TestRootIsAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(f, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	s, _ := file.New(f)
	if _, err := s.Head(ctx, "k"); !errors.Is(err, driver.ErrBucketMissing) {
		t.Fatalf("head: %v", err)
	}
	if err := s.MakeBucket(ctx); !errors.Is(err, driver.ErrBucketMissing) {
		t.Fatalf("make bucket: %v", err)
	}
}

func TestRelativeRootRefused(t *testing.T) {
	if _, err := file.New("rel/dir"); !errors.Is(err, driver.ErrConfig) {
		t.Fatalf("err = %v, want ErrConfig", err)
	}
}

func TestSymlinksRefused(t *testing.T) {
	s, dir := newStore(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "flink")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "link/secret", &driver.GetOptions{}); !errors.Is(err, driver.ErrKeyInvalid) {
		t.Errorf("get through a dir link: %v", err)
	}
	if _, err := s.Get(ctx, "flink", &driver.GetOptions{}); !errors.Is(err, driver.ErrKeyInvalid) {
		t.Errorf("get a file link: %v", err)
	}
	if _, err := s.Put(ctx, "link/new", strings.NewReader("x"), &driver.PutOptions{}); !errors.Is(err, driver.ErrKeyInvalid) {
		t.Errorf("put through a link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !os.IsNotExist(err) {
		t.Errorf("a put wrote outside the root: %v", err)
	}
	if _, err := s.List(ctx, &driver.ListOptions{Prefix: "link/"}); !errors.Is(err, driver.ErrKeyInvalid) {
		t.Errorf("list through a link: %v", err)
	}
	all, err := store.New(s, nil).ListAll(ctx, "")
	if err != nil || len(all) != 0 {
		t.Errorf("links listed: %v %v", keys(all), err)
	}
}

func TestPlainFiles(t *testing.T) {
	s, dir := newStore(t)
	path := filepath.Join(dir, "dropped.txt")
	if err := os.WriteFile(path, []byte("by hand"), 0o666); err != nil {
		t.Fatal(err)
	}
	h1, err := s.Head(ctx, "dropped.txt")
	if err != nil || h1.ETag == "" || h1.Size != 7 {
		t.Fatalf("head = %+v, %v", h1, err)
	}
	if err := os.WriteFile(path, []byte("edited!"), 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, time.Time{}, time.Now().Add(time.Second)) // coarse clocks
	h2, _ := s.Head(ctx, "dropped.txt")
	if h2.ETag == h1.ETag {
		t.Fatalf("ETag %s unchanged after an edit", h1.ETag)
	}
	// A wharf-written object edited by hand loses its stale sidecar and changes ETag.
	w := put(t, s, "w", "wharf", &driver.PutOptions{Metadata: map[string]string{"x": "1"}})
	if err := os.WriteFile(filepath.Join(dir, "w"), []byte("other"), 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, "w"), time.Time{}, time.Now().Add(time.Second))
	h3, _ := s.Head(ctx, "w")
	if h3.ETag == w.ETag || h3.Metadata["x"] != "" {
		t.Fatalf("after an edit by hand head = %+v (was %s)", h3, w.ETag)
	}
	if _, err := s.Put(ctx, "w", strings.NewReader("x"), &driver.PutOptions{IfMatch: w.ETag}); !errors.Is(err, driver.ErrPreconditionFailed) {
		t.Fatalf("If-Match on the stale ETag: %v", err)
	}
}

func TestFailedPutLeavesNothing(t *testing.T) {
	s, dir := newStore(t)
	c, cancel := context.WithCancel(ctx)
	defer cancel()
	boom := errors.New("boom")
	cases := []struct {
		name string
		ctx  context.Context
		body io.Reader
		want error
	}{
		{"body error", ctx, io.MultiReader(strings.NewReader("part"), errReader{boom}), driver.ErrUnavailable},
		{"cancelled mid-body", c, io.MultiReader(strings.NewReader("part"), cancelReader{cancel}, strings.NewReader("more")), context.Canceled},
		{"short body", ctx, strings.NewReader("abc"), driver.ErrUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Put(tc.ctx, "d/k", tc.body, &driver.PutOptions{Size: 10, IfNoneMatch: true})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if _, err := s.Head(ctx, "d/k"); !errors.Is(err, driver.ErrNotExist) {
				t.Fatalf("failed put left an object: %v", err)
			}
			if left := tempFiles(t, dir); len(left) != 0 {
				t.Fatalf("temporary files left: %v", left)
			}
		})
	}
}

// A temporary file left by a writer that died a day ago is removed at the store's first
// write; a recent one (a write in progress elsewhere) stays.
func TestStaleTempSwept(t *testing.T) {
	s, dir := newStore(t)
	tmp := filepath.Join(dir, ".wharf-meta", "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	old, fresh := filepath.Join(tmp, "left-by-a-crash"), filepath.Join(tmp, "in-progress")
	for _, p := range []string{old, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	day := time.Now().Add(-25 * time.Hour)
	if err := os.Chtimes(old, day, day); err != nil {
		t.Fatal(err)
	}
	put(t, s, "k", "v", nil)
	if _, err := os.Stat(old); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale temporary file: %v, want it removed", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("recent temporary file: %v, want it kept", err)
	}
}

// TestCreateOverExistingKeyStagesNothing: create-if-absent on an existing key is refused
// before the body is staged, so it needs no space (a full disk, here a temporary directory
// that cannot be made): the caller hears precondition-failed and can find its own bytes
// there, never an I/O error it would retry forever.
func TestCreateOverExistingKeyStagesNothing(t *testing.T) {
	s, dir := newStore(t)
	put(t, s, "k", "same bytes", nil)
	tmp := filepath.Join(dir, ".wharf-meta", "tmp")
	if err := os.RemoveAll(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, nil, 0o644); err != nil { // no temporary file can be made now
		t.Fatal(err)
	}
	_, err := s.Put(ctx, "k", strings.NewReader("same bytes"), &driver.PutOptions{IfNoneMatch: true})
	if !errors.Is(err, driver.ErrPreconditionFailed) {
		t.Fatalf("create over an existing key with no room to stage: %v, want ErrPreconditionFailed", err)
	}
}
