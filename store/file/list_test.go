package file_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
)

func TestListSortedAsStrings(t *testing.T) {
	s, _ := newStore(t)
	// '-' < '/' < '0': a directory's keys sort between its neighbours, not before them.
	for _, k := range []string{"a/b", "a0", "a-c", "a/a/z", "b"} {
		put(t, s, k, "", nil)
	}
	all, err := store.ListAll(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(all), "a-c,a/a/z,a/b,a0,b"; got != want {
		t.Fatalf("keys = %s, want %s", got, want)
	}
	sub, _ := store.ListAll(ctx, s, "a/")
	if got := keys(sub); got != "a/a/z,a/b" {
		t.Fatalf("under a/: %s", got)
	}
	part, _ := store.ListAll(ctx, s, "a")
	if got := keys(part); got != "a-c,a/a/z,a/b,a0" {
		t.Fatalf("under a: %s", got)
	}
}

func TestListPagination(t *testing.T) {
	s, _ := newStore(t)
	var want []string
	for i := range 1500 {
		want = append(want, fmt.Sprintf("p/%d/%04d", i%3, i))
	}
	putAll(t, s, want)
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
			if o.ETag == "" {
				t.Fatalf("%s listed without an ETag", o.Key)
			}
			got = append(got, o.Key)
		}
		if page.Next == "" {
			break
		}
		opts.Token = page.Next
	}
	slices.Sort(want)
	if pages != 2 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%d pages, %d keys; want 2 pages, %d keys in order", pages, len(got), len(want))
	}
}

func TestListDelimiter(t *testing.T) {
	s, dir := newStore(t)
	for _, k := range []string{"a/1", "a/b/2", "a/b/3", "a/c/4", "a-x", "a/d", "b"} {
		put(t, s, k, "", nil)
	}
	// An empty directory is not a common prefix.
	if err := os.MkdirAll(filepath.Join(dir, "a", "empty", "deeper"), 0o777); err != nil {
		t.Fatal(err)
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
		{"nope/deeper/", 0, []string{"|"}},
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

func TestListHidesOwnFiles(t *testing.T) {
	s, dir := newStore(t)
	put(t, s, "k", "v", &store.PutOptions{Metadata: map[string]string{"a": "b"}})
	if err := os.WriteFile(filepath.Join(dir, "bad\\name"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	all, err := store.ListAll(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(all); got != "k" {
		t.Fatalf("listed %s, want only k", got)
	}
	page, _ := s.List(ctx, &store.ListOptions{Delimiter: "/"})
	if len(page.Prefixes) != 0 {
		t.Fatalf("prefixes %v", page.Prefixes)
	}
}

func TestDeletePrunesDirectories(t *testing.T) {
	s, dir := newStore(t)
	put(t, s, "a/b/c/k", "v", nil)
	put(t, s, "a/keep", "v", nil)
	if err := s.Delete(ctx, "a/b/c/k", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "b")); !os.IsNotExist(err) {
		t.Fatalf("a/b left behind: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "keep")); err != nil {
		t.Fatalf("a/keep removed: %v", err)
	}
	page, _ := s.List(ctx, &store.ListOptions{Prefix: "a/", Delimiter: "/"})
	if len(page.Prefixes) != 0 || keys(page.Objects) != "a/keep" {
		t.Fatalf("after delete: %+v", page)
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
		out = append(out, keys(page.Objects)+"|"+strings.Join(page.Prefixes, ","))
		if page.Next == "" {
			return out
		}
		opts.Token = page.Next
	}
	t.Fatal("listing never ended")
	return nil
}
