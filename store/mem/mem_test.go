package mem_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

var ctx = context.Background()

func put(t *testing.T, s store.Store, key, body string, opts *store.PutOptions) store.ObjectInfo {
	t.Helper()
	info, err := s.Put(ctx, key, strings.NewReader(body), opts)
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return info
}

func read(t *testing.T, s store.Store, key string, opts *store.GetOptions) string {
	t.Helper()
	obj, err := s.Get(ctx, key, opts)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRoundTrip(t *testing.T) {
	s := mem.New()
	md := map[string]string{"wharf-sha256": "abc", "color": "blue"}
	info := put(t, s, "a/b.txt", "hello", &store.PutOptions{ContentType: "text/plain", Metadata: md})
	if info.Size != 5 || info.ETag == "" || info.Key != "a/b.txt" {
		t.Fatalf("put info = %+v", info)
	}
	md["color"] = "mutated after put"
	head, err := s.Head(ctx, "a/b.txt")
	if err != nil {
		t.Fatal(err)
	}
	if head.ETag != info.ETag || head.ContentType != "text/plain" || head.Metadata["color"] != "blue" {
		t.Errorf("head = %+v", head)
	}
	if got := read(t, s, "a/b.txt", nil); got != "hello" {
		t.Errorf("get = %q", got)
	}
}

func TestETagFreshPerWrite(t *testing.T) {
	s := mem.New()
	a := put(t, s, "k", "same", nil)
	b := put(t, s, "k", "same", nil)
	if a.ETag == b.ETag {
		t.Fatalf("two writes share ETag %s", a.ETag)
	}
}

func TestRanges(t *testing.T) {
	s := mem.New()
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
	s := mem.New()
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
			_, err := s.Put(ctx, "new", strings.NewReader("x"), &store.PutOptions{IfNoneMatch: true})
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
		{"pinned get current", func() error {
			_, err := s.Get(ctx, "k", &store.GetOptions{IfMatch: v1.ETag})
			return err
		}, nil},
		{"delete stale", func() error { return s.Delete(ctx, "k", &store.DeleteOptions{IfMatch: "stale"}) }, store.ErrPreconditionFailed},
		{"delete missing conditional", func() error { return s.Delete(ctx, "nope", &store.DeleteOptions{IfMatch: "x"}) }, store.ErrPreconditionFailed},
		{"delete missing", func() error { return s.Delete(ctx, "nope", nil) }, nil},
		{"get missing", func() error { _, err := s.Get(ctx, "nope", nil); return err }, store.ErrNotExist},
		{"head missing", func() error { _, err := s.Head(ctx, "nope"); return err }, store.ErrNotExist},
		{"copy missing", func() error { _, err := s.Copy(ctx, "nope", "x", nil); return err }, store.ErrNotExist},
		{"copy onto existing", func() error {
			_, err := s.Copy(ctx, "k", "new", &store.PutOptions{IfNoneMatch: true})
			return err
		}, store.ErrPreconditionFailed},
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
	s := mem.New()
	v1 := put(t, s, "k", "v1", nil)
	v2 := put(t, s, "k", "v2", &store.PutOptions{IfMatch: v1.ETag})
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

func TestCopy(t *testing.T) {
	s := mem.New()
	src := put(t, s, "src", "body", &store.PutOptions{ContentType: "a/b", Metadata: map[string]string{"x": "1"}})
	dst, err := s.Copy(ctx, "src", "dst", nil)
	if err != nil {
		t.Fatal(err)
	}
	if dst.ETag == src.ETag || dst.Metadata["x"] != "1" || dst.ContentType != "a/b" || dst.Key != "dst" {
		t.Errorf("copy info = %+v", dst)
	}
	if got := read(t, s, "dst", nil); got != "body" {
		t.Errorf("dst = %q", got)
	}
}

// TestNoLostUpdate races read-modify-write increments under IfMatch: every increment lands.
func TestNoLostUpdate(t *testing.T) {
	s := mem.New()
	put(t, s, "n", "0", nil)
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := 0; i < each; {
				obj, err := s.Get(ctx, "n", nil)
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := io.ReadAll(obj)
				obj.Close()
				n, _ := strconv.Atoi(string(b))
				_, err = s.Put(ctx, "n", strings.NewReader(strconv.Itoa(n+1)), &store.PutOptions{IfMatch: obj.Info.ETag})
				if errors.Is(err, store.ErrPreconditionFailed) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				i++
			}
		})
	}
	wg.Wait()
	if got := read(t, s, "n", nil); got != strconv.Itoa(workers*each) {
		t.Fatalf("counter = %s, want %d", got, workers*each)
	}
}

func TestCancelledContext(t *testing.T) {
	s := mem.New()
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Put(c, "k", strings.NewReader("x"), nil); err != context.Canceled {
		t.Fatalf("put: %v", err)
	}
	if _, err := s.Head(ctx, "k"); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("cancelled put left an object: %v", err)
	}
	if _, err := s.List(c, nil); err != context.Canceled {
		t.Fatalf("list: %v", err)
	}
}

func TestBodyErrorLeavesNothing(t *testing.T) {
	s := mem.New()
	boom := errors.New("boom")
	_, err := s.Put(ctx, "k", io.MultiReader(strings.NewReader("part"), errReader{boom}), nil)
	if !errors.Is(err, store.ErrUnavailable) || !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if _, err := s.Head(ctx, "k"); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("failed put left an object: %v", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestNamedStoresAreShared(t *testing.T) {
	a, err := store.OpenURL(ctx, "mem://shared-test/p", store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	put(t, a, "k", "v", nil)
	if got := read(t, mem.Named("shared-test"), "p/k", nil); got != "v" {
		t.Fatalf("named store sees %q", got)
	}
	b, err := store.OpenURL(ctx, "mem://shared-test", store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, b, "p/k", nil); got != "v" {
		t.Fatalf("second open sees %q", got)
	}
	if d := store.Describe(b); d.Scheme != "mem" || d.Location != "mem://shared-test" {
		t.Errorf("describe = %+v", d)
	}
	if err := store.MakeBucket(ctx, b); err != nil {
		t.Errorf("make bucket: %v", err)
	}
}

func TestListPagination(t *testing.T) {
	s := mem.New()
	var want []string
	for i := range 2500 {
		k := fmt.Sprintf("p/%05d", i)
		want = append(want, k)
		put(t, s, k, "", nil)
	}
	put(t, s, "q", "", nil)
	var got []string
	pages := 0
	opts := store.ListOptions{Prefix: "p/"}
	for {
		page, err := s.List(ctx, &opts)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(page.Objects) > store.DefaultMaxKeys {
			t.Fatalf("page of %d", len(page.Objects))
		}
		for _, o := range page.Objects {
			got = append(got, o.Key)
		}
		if page.Next == "" {
			break
		}
		opts.Token = page.Next
	}
	if pages != 3 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%d pages, %d keys; want 3 pages, %d keys in order", pages, len(got), len(want))
	}
}

func TestListDelimiter(t *testing.T) {
	s := mem.New()
	for _, k := range []string{"a/1", "a/b/2", "a/b/3", "a/c/4", "a-x", "a/d", "b"} {
		put(t, s, k, "", nil)
	}
	cases := []struct {
		prefix string
		max    int
		want   []string // pages, each "objects|prefixes"
	}{
		{"", 0, []string{"a-x,b|a/"}},
		{"a/", 0, []string{"a/1,a/d|a/b/,a/c/"}},
		{"a/", 2, []string{"a/1|a/b/", "a/d|a/c/"}},
		{"a/", 1, []string{"a/1|", "|a/b/", "|a/c/", "a/d|"}},
		{"a/b", 0, []string{"|a/b/"}},
		{"zz", 0, []string{"|"}},
	}
	for _, c := range cases {
		t.Run(c.prefix+"/"+strconv.Itoa(c.max), func(t *testing.T) {
			got := listPages(t, s, store.ListOptions{Prefix: c.prefix, Delimiter: "/", MaxKeys: c.max})
			if strings.Join(got, " ; ") != strings.Join(c.want, " ; ") {
				t.Fatalf("pages = %q, want %q", got, c.want)
			}
		})
	}
}

func listPages(t *testing.T, s store.Store, opts store.ListOptions) []string {
	t.Helper()
	var out []string
	for range 100 {
		page, err := s.List(ctx, &opts)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, o := range page.Objects {
			keys = append(keys, o.Key)
		}
		out = append(out, strings.Join(keys, ",")+"|"+strings.Join(page.Prefixes, ","))
		if page.Next == "" {
			return out
		}
		opts.Token = page.Next
	}
	t.Fatal("listing never ended")
	return nil
}
