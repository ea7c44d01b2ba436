package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
)

// testPortable runs the cases of what package store adds over every backend: a store opened
// below a prefix, batch deletes, and making the bucket.
func (su *suite) testPortable(t *testing.T) {
	t.Run("Prefixed", su.testPrefixed)
	t.Run("DeleteMany", su.testDeleteMany)
	t.Run("MakeBucket", su.testMakeBucket)
}

// testPrefixed: a store below a prefix serves its keys relative to it, for every operation,
// and never shows or touches a key outside it; errors name the key in the bucket.
func (su *suite) testPrefixed(t *testing.T) {
	root := su.open(t)
	putBytes(t, root, "outside", []byte("x"), nil)
	s := root.Sub("nested/dir")
	putBytes(t, s, "a", []byte("aa"), &store.PutOptions{Metadata: map[string]string{"owner": "me"}})
	putBytes(t, s, "sub/b", []byte("bbb"), nil)
	if info := mustHead(t, s, "a"); info.Key != "a" || info.Size != 2 || info.Metadata["owner"] != "me" {
		t.Errorf("head through the prefix: %+v", info)
	}
	wantContent(t, root, "nested/dir/a", []byte("aa"), "the object at its full key")
	all, err := s.ListAll(t.Context(), "")
	if err != nil || keysOf(all) != "a,sub/b" {
		t.Errorf("listing below the prefix: %q, %v; want a,sub/b", keysOf(all), err)
	}
	page, err := s.List(t.Context(), &store.ListOptions{Delimiter: "/"})
	if err != nil || keysOf(page.Objects) != "a" || !slices.Equal(page.Prefixes, []string{"sub/"}) {
		t.Errorf("one level below the prefix: %+v, %v", page, err)
	}
	if _, err := s.Copy(t.Context(), "a", "c", nil); err != nil {
		t.Fatalf("copy below the prefix: %v", err)
	}
	wantContent(t, root, "nested/dir/c", []byte("aa"), "the copy at its full key")
	_, err = s.Get(t.Context(), "missing", nil)
	wantKind(t, err, store.ErrNotExist, "get of a missing key below the prefix")
	if err != nil && !strings.Contains(err.Error(), "nested/dir/missing") {
		t.Errorf("the error does not name the key in the bucket: %v", err)
	}
	if err := s.Delete(t.Context(), "sub/b", nil); err != nil {
		t.Fatal(err)
	}
	all, err = root.ListAll(t.Context(), "")
	if err != nil || keysOf(all) != "nested/dir/a,nested/dir/c,outside" {
		t.Errorf("the bucket after work below the prefix: %q, %v", keysOf(all), err)
	}
}

// testDeleteMany: the keys given go (missing ones are no error), the others stay, through a
// prefix too.
func (su *suite) testDeleteMany(t *testing.T) {
	root := su.open(t)
	s := root.Sub("batch")
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		putBytes(t, s, k, []byte(k), nil)
	}
	putBytes(t, root, "batch-sibling", []byte("s"), nil)
	if err := s.DeleteMany(t.Context(), []string{"a", "c", "missing", "e"}); err != nil {
		t.Fatalf("DeleteMany: %v", err)
	}
	all, err := root.ListAll(t.Context(), "")
	if err != nil || keysOf(all) != "batch-sibling,batch/b,batch/d" {
		t.Errorf("left after DeleteMany: %q, %v", keysOf(all), err)
	}
	err = s.DeleteMany(t.Context(), []string{"b", "../escape"})
	wantKind(t, err, store.ErrKeyInvalid, "DeleteMany with an invalid key")
	mustHead(t, s, "b") // nothing deleted before the keys were checked
}

// testMakeBucket: making a bucket that exists and is ours succeeds (mb is safe to run twice);
// a missing one is made, and then takes writes.
func (su *suite) testMakeBucket(t *testing.T) {
	s := su.open(t)
	if err := s.MakeBucket(t.Context()); err != nil {
		t.Errorf("MakeBucket of the bucket that exists: %v", err)
	}
	if su.h.OpenMissing == nil {
		return
	}
	m := su.h.OpenMissing(t)
	_, err := tryPut(t, m, "k", []byte("v"), nil)
	wantKind(t, err, store.ErrBucketMissing, "put before MakeBucket")
	if err := m.MakeBucket(t.Context()); err != nil {
		if errors.Is(err, store.ErrUnsupported) {
			t.Skipf("%s cannot make buckets", su.h.Name)
		}
		t.Fatalf("MakeBucket of a missing bucket: %v", err)
	}
	putBytes(t, m, "k", []byte("v"), nil)
	wantContent(t, m, "k", []byte("v"), "a put after MakeBucket")
	if err := m.MakeBucket(t.Context()); err != nil {
		t.Errorf("MakeBucket again: %v", err)
	}
}

func keysOf(infos []store.ObjectInfo) string {
	var ks []string
	for _, o := range infos {
		ks = append(ks, o.Key)
	}
	return strings.Join(ks, ",")
}
