package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/wharfdata/wharf/store"
)

func (su *suite) testList(t *testing.T) {
	t.Run("Empty", su.testListEmpty)
	t.Run("Sorted", su.testListSorted)
	t.Run("Prefix", su.testListPrefix)
	t.Run("Delimiter", su.testListDelimiter)
	t.Run("DelimiterPages", su.testListDelimiterPages)
	t.Run("Pagination", su.testListPagination)
	t.Run("OddKeys", su.testListOddKeys)
	t.Run("WalkTree", su.testWalkTree)
}

// testWalkTree: WalkTree yields exactly the objects Walk does (in any order), whatever its
// width, for a tree with objects at every level, more directories than the width, and a
// deep branch; a yield returning false stops it.
func (su *suite) testWalkTree(t *testing.T) {
	s := su.open(t)
	var keys []string
	for i := range 12 {
		keys = append(keys, fmt.Sprintf("t/d%02d/x", i))
	}
	keys = append(keys, "t/top", "t/d00/y/z/deep/1", "t/d00/y/z/deep/er/2", "t/d03/y", "u/outside")
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() { putBytes(t, s, k, []byte(k), nil) })
	}
	wg.Wait()
	var want []string
	for o, err := range s.Walk(t.Context(), "t/") {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, o.Key)
	}
	for _, width := range []int{1, 4, 64} {
		var got []string
		for o, err := range s.WalkTree(t.Context(), "t/", width) {
			if err != nil {
				t.Fatalf("WalkTree width %d: %v", width, err)
			}
			got = append(got, o.Key)
		}
		slices.Sort(got)
		wantKeys(t, fmt.Sprintf("WalkTree width %d", width), got, want)
	}
	n := 0
	for _, err := range s.WalkTree(t.Context(), "t/", 4) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("WalkTree went on after its yield returned false: %d", n)
	}
}

// listKeys follows every page of a listing and returns the keys and prefixes in order, and
// how many pages it took. Each page must hold at most MaxKeys entries when MaxKeys is set.
func listKeys(t *testing.T, s *store.Store, opts store.ListOptions) (keys, prefixes []string, pages int) {
	t.Helper()
	for {
		page, err := s.List(t.Context(), &opts)
		if err != nil {
			t.Fatalf("list %+v (page %d): %v", opts, pages+1, err)
		}
		pages++
		if n := len(page.Objects) + len(page.Prefixes); opts.MaxKeys > 0 && n > opts.MaxKeys {
			t.Errorf("list page %d: %d entries, more than MaxKeys %d", pages, n, opts.MaxKeys)
		}
		for _, o := range page.Objects {
			keys = append(keys, o.Key)
		}
		prefixes = append(prefixes, page.Prefixes...)
		if page.Next == "" {
			return keys, prefixes, pages
		}
		if page.Next == opts.Token {
			t.Fatalf("list: page %d handed back the same token %q", pages, page.Next)
		}
		if pages > 10_000 {
			t.Fatalf("list: more than 10,000 pages")
		}
		opts.Token = page.Next
	}
}

func wantKeys(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: listed %q, want %q", what, got, want)
	}
}

func (su *suite) testListEmpty(t *testing.T) {
	s := su.open(t)
	page, err := s.List(t.Context(), &store.ListOptions{})
	if err != nil {
		t.Fatalf("list of an empty store: %v", err)
	}
	if len(page.Objects) != 0 || len(page.Prefixes) != 0 || page.Next != "" {
		t.Errorf("empty store listed %+v, want nothing", page)
	}
}

// testListSorted puts keys out of order and lists them sorted, with Size and ETag.
func (su *suite) testListSorted(t *testing.T) {
	s := su.open(t)
	keys := []string{"b", "a/2", "c", "a/10", "a/1", "Z", "a-", "a0"}
	etags := map[string]string{}
	for i, k := range keys {
		etags[k] = putBytes(t, s, k, make([]byte, i), nil).ETag
	}
	page, err := s.List(t.Context(), nil)
	if err != nil {
		t.Fatalf("list with nil options: %v", err)
	}
	var got []string
	for _, o := range page.Objects {
		got = append(got, o.Key)
		if want := int64(slices.Index(keys, o.Key)); o.Size != want {
			t.Errorf("list: %q has Size %d, want %d", o.Key, o.Size, want)
		}
		if o.ETag != "" && o.ETag != etags[o.Key] {
			t.Errorf("list: %q has ETag %q, put returned %q", o.Key, o.ETag, etags[o.Key])
		}
	}
	want := slices.Clone(keys)
	slices.Sort(want)
	wantKeys(t, "sorted", got, want)
}

// testListPrefix: a prefix is a plain string prefix, not a directory.
func (su *suite) testListPrefix(t *testing.T) {
	s := su.open(t)
	for _, k := range []string{"a/1", "a/2", "ab", "b/1", "a.txt"} {
		putBytes(t, s, k, []byte(k), nil)
	}
	for prefix, want := range map[string][]string{
		"a/":    {"a/1", "a/2"},
		"a":     {"a.txt", "a/1", "a/2", "ab"},
		"b/1":   {"b/1"},
		"zz":    nil,
		"a/1/x": nil,
	} {
		got, _, _ := listKeys(t, s, store.ListOptions{Prefix: prefix})
		wantKeys(t, "prefix "+prefix, got, want)
	}
	_, err := s.List(t.Context(), &store.ListOptions{Prefix: "../x"})
	wantKind(t, err, store.ErrKeyInvalid, "list with prefix ../x")
}

// testListDelimiter: with Delimiter "/", keys below the next '/' roll up into Prefixes.
func (su *suite) testListDelimiter(t *testing.T) {
	s := su.open(t)
	for _, k := range []string{"a/1", "a/2", "a/b/3", "b", "c/4", "c/d/5"} {
		putBytes(t, s, k, []byte(k), nil)
	}
	tests := []struct {
		prefix            string
		objects, prefixes []string
	}{
		{"", []string{"b"}, []string{"a/", "c/"}},
		{"a/", []string{"a/1", "a/2"}, []string{"a/b/"}},
		{"c/", []string{"c/4"}, []string{"c/d/"}},
		{"a/b/", []string{"a/b/3"}, nil},
		{"a", nil, []string{"a/"}},
	}
	for _, tc := range tests {
		objs, prefixes, _ := listKeys(t, s, store.ListOptions{Prefix: tc.prefix, Delimiter: "/"})
		wantKeys(t, "objects below "+tc.prefix, objs, tc.objects)
		wantKeys(t, "prefixes below "+tc.prefix, prefixes, tc.prefixes)
	}
}

// testListDelimiterPages: a delimited listing split into small pages yields every object
// and every prefix once, in order.
func (su *suite) testListDelimiterPages(t *testing.T) {
	s := su.open(t)
	var wantObjs, wantPrefixes []string
	for d := range 6 {
		wantPrefixes = append(wantPrefixes, fmt.Sprintf("d%d/", d))
		wantObjs = append(wantObjs, fmt.Sprintf("f%d", d))
		putBytes(t, s, fmt.Sprintf("f%d", d), nil, nil)
		for f := range 3 {
			putBytes(t, s, fmt.Sprintf("d%d/%d", d, f), nil, nil)
		}
	}
	for _, n := range []int{1, 2, 5} {
		objs, prefixes, _ := listKeys(t, s, store.ListOptions{Delimiter: "/", MaxKeys: n})
		wantKeys(t, fmt.Sprintf("objects, pages of %d", n), objs, wantObjs)
		wantKeys(t, fmt.Sprintf("prefixes, pages of %d", n), prefixes, wantPrefixes)
	}
}

// testListPagination lists more keys than one default page, by the backend's default page
// size, by pages of 250, and through store.Walk.
func (su *suite) testListPagination(t *testing.T) {
	s := su.open(t)
	n := su.h.ManyKeys
	want := make([]string, n)
	for i := range n {
		want[i] = fmt.Sprintf("many/%05d", i)
	}
	putMany(t, s, want)
	putBytes(t, s, "other", nil, nil)

	got, _, _ := listKeys(t, s, store.ListOptions{Prefix: "many/"})
	wantKeys(t, "default pages", got, want)
	got, _, pages := listKeys(t, s, store.ListOptions{Prefix: "many/", MaxKeys: 250})
	wantKeys(t, "pages of 250", got, want)
	if min := (n + 249) / 250; pages < min {
		t.Errorf("pages of 250: %d pages for %d keys, want at least %d", pages, n, min)
	}
	got = got[:0]
	for o, err := range s.Walk(t.Context(), "many/") {
		if err != nil {
			t.Fatalf("walk: %v", err)
		}
		got = append(got, o.Key)
	}
	wantKeys(t, "walk", got, want)
}

// putMany puts an empty object at each key, 16 at a time.
func putMany(t *testing.T, s *store.Store, keys []string) {
	t.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	errs := make(chan error, len(keys))
	for _, k := range keys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if _, err := tryPut(t, s, k, nil, nil); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("put: %v", err)
	}
}

// testListOddKeys: keys with spaces, unicode, URL-special characters and a tab round-trip
// through Put, List and Get.
func (su *suite) testListOddKeys(t *testing.T) {
	s := su.open(t)
	keys := []string{
		"with space/a b.txt", "ünïcödé/日本語.json", "plus+sign", "percent%20encoded",
		"query?x=1&y=2", "hash#frag", "tilde~quote'", "emoji-🚢", "semi;colon,comma", "tab\tkey",
	}
	for _, k := range keys {
		putBytes(t, s, k, []byte(k), nil)
	}
	got, _, _ := listKeys(t, s, store.ListOptions{})
	want := slices.Clone(keys)
	slices.Sort(want)
	wantKeys(t, "odd keys", got, want)
	for _, k := range keys {
		wantContent(t, s, k, []byte(k), "odd key")
	}
	objs, _, _ := listKeys(t, s, store.ListOptions{Prefix: "ünïcödé/"})
	wantKeys(t, "unicode prefix", objs, []string{"ünïcödé/日本語.json"})
}
