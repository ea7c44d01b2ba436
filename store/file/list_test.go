package file_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

func TestListSortedAsStrings(t *testing.T) {
	s, _ := newStore(t)
	// '-' < '/' < '0': a directory's keys sort between its neighbours, not before them.
	for _, k := range []string{"a/b", "a0", "a-c", "a/a/z", "b"} {
		put(t, s, k, "", nil)
	}
	all, err := store.New(s, nil).ListAll(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(all), "a-c,a/a/z,a/b,a0,b"; got != want {
		t.Fatalf("keys = %s, want %s", got, want)
	}
	sub, _ := store.New(s, nil).ListAll(ctx, "a/")
	if got := keys(sub); got != "a/a/z,a/b" {
		t.Fatalf("under a/: %s", got)
	}
	part, _ := store.New(s, nil).ListAll(ctx, "a")
	if got := keys(part); got != "a-c,a/a/z,a/b,a0" {
		t.Fatalf("under a: %s", got)
	}
}

func TestListHidesOwnFiles(t *testing.T) {
	s, dir := newStore(t)
	put(t, s, "k", "v", &driver.PutOptions{Metadata: map[string]string{"a": "b"}})
	if err := os.WriteFile(filepath.Join(dir, "bad\x01name"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	all, err := store.New(s, nil).ListAll(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(all); got != "k" {
		t.Fatalf("listed %s, want only k", got)
	}
	page, _ := s.List(ctx, &driver.ListOptions{Delimiter: "/"})
	if len(page.Prefixes) != 0 {
		t.Fatalf("prefixes %v", page.Prefixes)
	}
}

func TestDeletePrunesDirectories(t *testing.T) {
	s, dir := newStore(t)
	put(t, s, "a/b/c/k", "v", nil)
	put(t, s, "a/keep", "v", nil)
	if err := s.Delete(ctx, "a/b/c/k", &driver.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "b")); !os.IsNotExist(err) {
		t.Fatalf("a/b left behind: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "keep")); err != nil {
		t.Fatalf("a/keep removed: %v", err)
	}
	page, _ := s.List(ctx, &driver.ListOptions{Prefix: "a/", Delimiter: "/"})
	if len(page.Prefixes) != 0 || keys(page.Objects) != "a/keep" {
		t.Fatalf("after delete: %+v", page)
	}
}
