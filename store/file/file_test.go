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
	"github.com/wharfdata/wharf/store/file"
)

func TestRoundTrip(t *testing.T) {
	s, dir := newStore(t)
	md := map[string]string{"wharf-sha256": "abc", "color": "blue"}
	info := put(t, s, "a/b/c.txt", "hello", &store.PutOptions{ContentType: "text/plain", Metadata: md})
	if info.Size != 5 || info.ETag == "" || info.Key != "a/b/c.txt" || info.LastModified.IsZero() {
		t.Fatalf("put info = %+v", info)
	}
	head, err := s.Head(ctx, "a/b/c.txt")
	if err != nil {
		t.Fatal(err)
	}
	if head.ETag != info.ETag || head.ContentType != "text/plain" || head.Metadata["color"] != "blue" || head.Size != 5 {
		t.Errorf("head = %+v", head)
	}
	if got := read(t, s, "a/b/c.txt", nil); got != "hello" {
		t.Errorf("get = %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a", "b", "c.txt")); err != nil || string(b) != "hello" {
		t.Errorf("file on disk = %q, %v", b, err)
	}
	if left := tempFiles(t, dir); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestETagChangesOnEveryWrite(t *testing.T) {
	s, _ := newStore(t)
	a := put(t, s, "k", "same", nil)
	b := put(t, s, "k", "same", nil)
	if a.ETag == b.ETag {
		t.Fatalf("two writes share ETag %s", a.ETag)
	}
}

func TestRanges(t *testing.T) {
	s, _ := newStore(t)
	put(t, s, "k", "0123456789", nil)
	cases := []struct {
		off, n int64
		want   string
	}{
		{0, 0, "0123456789"}, {3, 0, "3456789"}, {3, 4, "3456"}, {8, 10, "89"}, {10, 0, ""}, {20, 5, ""},
	}
	for _, c := range cases {
		obj, err := s.Get(ctx, "k", &store.GetOptions{Offset: c.off, Length: c.n})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(obj)
		obj.Close()
		if string(b) != c.want || obj.Info.Size != 10 {
			t.Errorf("range %d+%d = %q (size %d), want %q (size 10)", c.off, c.n, b, obj.Info.Size, c.want)
		}
	}
}

func TestConditions(t *testing.T) {
	s, _ := newStore(t)
	v1 := put(t, s, "k", "v1", nil)
	cases := []struct {
		name string
		call func() error
		want error
	}{
		{"create on existing", func() error {
			_, err := s.Put(ctx, "k", strings.NewReader("x"), &store.PutOptions{IfNoneMatch: true})
			return err
		}, store.ErrPreconditionFailed},
		{"create on absent", func() error {
			_, err := s.Put(ctx, "new/key", strings.NewReader("x"), &store.PutOptions{IfNoneMatch: true})
			return err
		}, nil},
		{"if-match stale", func() error {
			_, err := s.Put(ctx, "k", strings.NewReader("x"), &store.PutOptions{IfMatch: "stale"})
			return err
		}, store.ErrPreconditionFailed},
		{"if-match missing", func() error {
			_, err := s.Put(ctx, "nope", strings.NewReader("x"), &store.PutOptions{IfMatch: v1.ETag})
			return err
		}, store.ErrPreconditionFailed},
		{"pinned get stale", func() error {
			_, err := s.Get(ctx, "k", &store.GetOptions{IfMatch: "stale"})
			return err
		}, store.ErrPreconditionFailed},
		{"delete stale", func() error { return s.Delete(ctx, "k", &store.DeleteOptions{IfMatch: "stale"}) }, store.ErrPreconditionFailed},
		{"delete missing conditional", func() error { return s.Delete(ctx, "nope", &store.DeleteOptions{IfMatch: "x"}) }, store.ErrPreconditionFailed},
		{"delete missing", func() error { return s.Delete(ctx, "nope", nil) }, nil},
		{"get missing", func() error { _, err := s.Get(ctx, "nope", nil); return err }, store.ErrNotExist},
		{"head missing", func() error { _, err := s.Head(ctx, "nope"); return err }, store.ErrNotExist},
		{"get below a file", func() error { _, err := s.Get(ctx, "k/x", nil); return err }, store.ErrNotExist},
		{"get a directory", func() error { _, err := s.Get(ctx, "new", nil); return err }, store.ErrNotExist},
		{"copy missing", func() error { _, err := s.Copy(ctx, "nope", "x", nil); return err }, store.ErrNotExist},
		{"copy onto existing", func() error {
			_, err := s.Copy(ctx, "k", "new/key", &store.PutOptions{IfNoneMatch: true})
			return err
		}, store.ErrPreconditionFailed},
		{"put onto a directory", func() error { _, err := s.Put(ctx, "new", strings.NewReader("x"), nil); return err }, store.ErrUnsupported},
		{"put below a file", func() error { _, err := s.Put(ctx, "k/x", strings.NewReader("x"), nil); return err }, store.ErrUnsupported},
		{"hidden key", func() error { _, err := s.Put(ctx, ".wharf-meta/lock", strings.NewReader("x"), nil); return err }, store.ErrKeyInvalid},
		{"hidden key get", func() error { _, err := s.Get(ctx, ".wharf-meta/lock", nil); return err }, store.ErrKeyInvalid},
		{"hidden prefix", func() error { _, err := s.List(ctx, &store.ListOptions{Prefix: ".wharf-meta/"}); return err }, store.ErrKeyInvalid},
		{"escaping key", func() error { _, err := s.Get(ctx, "../etc/passwd", nil); return err }, store.ErrKeyInvalid},
		{"absolute key", func() error { _, err := s.Put(ctx, "/etc/x", strings.NewReader("x"), nil); return err }, store.ErrKeyInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if c.want == nil && err != nil || !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			var se *store.Error
			if err != nil && (!errors.As(err, &se) || se.Op == "" || se.Key == "") {
				t.Fatalf("err %v lacks Op or Key", err)
			}
		})
	}
	if got := read(t, s, "k", nil); got != "v1" {
		t.Errorf("after failed conditions k = %q, want v1", got)
	}
}

func TestPinnedReadAfterOverwrite(t *testing.T) {
	s, _ := newStore(t)
	v1 := put(t, s, "k", "v1", nil)
	open, err := s.Get(ctx, "k", &store.GetOptions{IfMatch: v1.ETag})
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	v2 := put(t, s, "k", "v2", &store.PutOptions{IfMatch: v1.ETag})
	if b, _ := io.ReadAll(open); string(b) != "v1" {
		t.Errorf("a body opened before the overwrite reads %q, want v1", b)
	}
	if _, err := s.Get(ctx, "k", &store.GetOptions{IfMatch: v1.ETag}); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("pinned to v1 after overwrite: %v", err)
	}
	if got := read(t, s, "k", &store.GetOptions{IfMatch: v2.ETag}); got != "v2" {
		t.Fatalf("pinned to v2: %q", got)
	}
	if err := s.Delete(ctx, "k", &store.DeleteOptions{IfMatch: v2.ETag}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(ctx, "k"); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("after conditional delete: %v", err)
	}
}

func TestMissingRoot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	s, err := file.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"get":    func() error { _, err := s.Get(ctx, "k", nil); return err },
		"head":   func() error { _, err := s.Head(ctx, "k"); return err },
		"list":   func() error { _, err := s.List(ctx, &store.ListOptions{}); return err },
		"put":    func() error { _, err := s.Put(ctx, "k", strings.NewReader("x"), nil); return err },
		"delete": func() error { return s.Delete(ctx, "k", nil) },
		"copy":   func() error { _, err := s.Copy(ctx, "k", "j", nil); return err },
	}
	for op, call := range calls {
		err := call()
		if !errors.Is(err, store.ErrBucketMissing) || !strings.Contains(err.Error(), dir) {
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

func TestRootIsAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(f, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	s, _ := file.New(f)
	if _, err := s.Head(ctx, "k"); !errors.Is(err, store.ErrBucketMissing) {
		t.Fatalf("head: %v", err)
	}
	if err := s.MakeBucket(ctx); !errors.Is(err, store.ErrBucketMissing) {
		t.Fatalf("make bucket: %v", err)
	}
}

func TestRelativeRootRefused(t *testing.T) {
	if _, err := file.New("rel/dir"); !errors.Is(err, store.ErrConfig) {
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
	if _, err := s.Get(ctx, "link/secret", nil); !errors.Is(err, store.ErrKeyInvalid) {
		t.Errorf("get through a dir link: %v", err)
	}
	if _, err := s.Get(ctx, "flink", nil); !errors.Is(err, store.ErrKeyInvalid) {
		t.Errorf("get a file link: %v", err)
	}
	if _, err := s.Put(ctx, "link/new", strings.NewReader("x"), nil); !errors.Is(err, store.ErrKeyInvalid) {
		t.Errorf("put through a link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !os.IsNotExist(err) {
		t.Errorf("a put wrote outside the root: %v", err)
	}
	if _, err := s.List(ctx, &store.ListOptions{Prefix: "link/"}); !errors.Is(err, store.ErrKeyInvalid) {
		t.Errorf("list through a link: %v", err)
	}
	all, err := store.ListAll(ctx, s, "")
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
	w := put(t, s, "w", "wharf", &store.PutOptions{Metadata: map[string]string{"x": "1"}})
	if err := os.WriteFile(filepath.Join(dir, "w"), []byte("other"), 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, "w"), time.Time{}, time.Now().Add(time.Second))
	h3, _ := s.Head(ctx, "w")
	if h3.ETag == w.ETag || h3.Metadata["x"] != "" {
		t.Fatalf("after an edit by hand head = %+v (was %s)", h3, w.ETag)
	}
	if _, err := s.Put(ctx, "w", strings.NewReader("x"), &store.PutOptions{IfMatch: w.ETag}); !errors.Is(err, store.ErrPreconditionFailed) {
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
		{"body error", ctx, io.MultiReader(strings.NewReader("part"), errReader{boom}), store.ErrUnavailable},
		{"cancelled mid-body", c, io.MultiReader(strings.NewReader("part"), cancelReader{cancel}, strings.NewReader("more")), context.Canceled},
		{"short body", ctx, strings.NewReader("abc"), store.ErrUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Put(tc.ctx, "d/k", tc.body, &store.PutOptions{Size: 10, IfNoneMatch: true})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if _, err := s.Head(ctx, "d/k"); !errors.Is(err, store.ErrNotExist) {
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
