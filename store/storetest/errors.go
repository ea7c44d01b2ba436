package storetest

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

func (su *suite) testErrors(t *testing.T) {
	t.Run("NotExist", su.testNotExist)
	t.Run("TrailingSlash", su.testTrailingSlash)
	t.Run("InvalidKeys", su.testInvalidKeys)
	t.Run("BucketMissing", su.testBucketMissing)
	t.Run("Cancelled", su.testCancelled)
}

// wantOpKey fails t unless err is an *store.Error naming op and key (the key may carry the
// store's prefix in front).
func wantOpKey(t *testing.T, err error, op, key string) {
	t.Helper()
	var e *store.Error
	if !errors.As(err, &e) {
		t.Errorf("%s %q: %v is not a *store.Error", op, key, err)
		return
	}
	if e.Op != op || !strings.HasSuffix(e.Key, key) {
		t.Errorf("%s %q: error names op %q key %q", op, key, e.Op, e.Key)
	}
}

// testNotExist: Get and Head of a missing key are ErrNotExist naming the op and the key.
func (su *suite) testNotExist(t *testing.T) {
	s := su.open(t)
	putBytes(t, s, "present", []byte("x"), nil)
	const key = "missing/key"
	_, err := s.Head(t.Context(), key)
	wantKind(t, err, store.ErrNotExist, "head of a missing key")
	wantOpKey(t, err, "head", key)
	_, err = s.Get(t.Context(), key, nil)
	wantKind(t, err, store.ErrNotExist, "get of a missing key")
	wantOpKey(t, err, "get", key)
	_, err = s.Get(t.Context(), key, &store.GetOptions{Offset: 1, Length: 2})
	wantKind(t, err, store.ErrNotExist, "ranged get of a missing key")
	if errors.Is(err, store.ErrBucketMissing) {
		t.Errorf("a missing key also unwraps to ErrBucketMissing: %v", err)
	}
}

var invalidKeys = []string{"", "../x", "a/../b", "./a", "a//b", "/a", "a//", "/", "nul\x00", "bell\x07", "\xff"}

// testTrailingSlash: a key may end in '/' (a directory marker, or an object another tool
// wrote there), and such an object is put, read, listed, copied and deleted like any other;
// a store that keeps objects as files (Harness.NoTrailingSlash) refuses it with ErrKeyInvalid
// and writes nothing.
func (su *suite) testTrailingSlash(t *testing.T) {
	s := su.open(t)
	ctx := t.Context()
	if su.h.NoTrailingSlash {
		_, err := s.Put(ctx, "dir/", bytes.NewReader(nil), &store.PutOptions{Size: 0})
		wantKind(t, err, store.ErrKeyInvalid, "put dir/")
		_, err = s.Head(ctx, "dir/")
		wantKind(t, err, store.ErrKeyInvalid, "head dir/")
		return
	}
	quirk := func(op string) bool {
		why, ok := su.h.TrailingSlashQuirks[op]
		if ok {
			t.Logf("%s: %s of a key ending in '/' not checked: %s", su.h.Name, op, why)
		}
		return ok
	}
	if why, ok := su.h.TrailingSlashQuirks["all"]; ok {
		t.Skipf("%s: keys ending in '/' not checked: %s", su.h.Name, why)
	}
	for key, body := range map[string]string{"dir/": "", "odd/": "bytes of a key ending in a slash"} {
		if _, err := s.Put(ctx, key, strings.NewReader(body), &store.PutOptions{Size: int64(len(body))}); err != nil {
			t.Fatalf("put %q: %v", key, err)
		}
		if quirk("read") {
			continue
		}
		if head := mustHead(t, s, key); head.Size != int64(len(body)) {
			t.Errorf("head %q: size %d, want %d", key, head.Size, len(body))
		}
		if got, _ := getBytes(t, s, key, nil); string(got) != body {
			t.Errorf("get %q: %q, want %q", key, got, body)
		}
	}
	want := []string{"dir/", "odd/"}
	if !quirk("copy") {
		if _, err := s.Copy(ctx, "odd/", "copied/", nil); err != nil {
			t.Fatalf("copy odd/ to copied/: %v", err)
		}
		want = append([]string{"copied/"}, want...)
	}
	var keys []string
	for o, err := range s.Walk(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, o.Key)
	}
	if !slices.Equal(keys, want) {
		t.Errorf("listed %q, want %q", keys, want)
	}
	for _, key := range want {
		if err := s.Delete(ctx, key, nil); err != nil {
			t.Errorf("delete %q: %v", key, err)
		}
		if _, err := s.Head(ctx, key); !errors.Is(err, store.ErrNotExist) && !quirk("read") {
			t.Errorf("head %q after its delete: %v, want ErrNotExist", key, err)
		}
	}
}

// testInvalidKeys: every op refuses an invalid key with ErrKeyInvalid and writes nothing.
func (su *suite) testInvalidKeys(t *testing.T) {
	s := su.open(t)
	ctx := t.Context()
	for _, key := range invalidKeys {
		_, err := s.Put(ctx, key, bytes.NewReader([]byte("x")), &store.PutOptions{Size: 1})
		wantKind(t, err, store.ErrKeyInvalid, "put "+key)
		_, err = s.Put(ctx, key, bytes.NewReader([]byte("x")), &store.PutOptions{Size: 1, IfNoneMatch: true})
		wantKind(t, err, store.ErrKeyInvalid, "create-if-absent "+key)
		_, err = s.Get(ctx, key, nil)
		wantKind(t, err, store.ErrKeyInvalid, "get "+key)
		_, err = s.Head(ctx, key)
		wantKind(t, err, store.ErrKeyInvalid, "head "+key)
		err = s.Delete(ctx, key, nil)
		wantKind(t, err, store.ErrKeyInvalid, "delete "+key)
		_, err = s.Copy(ctx, "src", key, nil)
		wantKind(t, err, store.ErrKeyInvalid, "copy to "+key)
	}
	// A backslash is read (an object another tool wrote) but never written or deleted: some
	// stores take it for '/', and would act on another key.
	bs := `a\b`
	_, err := s.Put(ctx, bs, bytes.NewReader([]byte("x")), &store.PutOptions{Size: 1})
	wantKind(t, err, store.ErrKeyInvalid, "put "+bs)
	wantKind(t, s.Delete(ctx, bs, nil), store.ErrKeyInvalid, "delete "+bs)
	_, err = s.Copy(ctx, "src", bs, nil)
	wantKind(t, err, store.ErrKeyInvalid, "copy to "+bs)
	if runtime.GOOS != "windows" {
		_, err = s.Head(ctx, bs)
		wantKind(t, err, store.ErrNotExist, "head "+bs)
	}
	_, err = s.Put(ctx, "ok", bytes.NewReader(nil), &store.PutOptions{Metadata: map[string]string{"Upper": "x"}})
	wantKind(t, err, store.ErrKeyInvalid, "put with an uppercase metadata key")
	wantEmpty(t, s, "after refused puts")
}

// testBucketMissing: every op on a store whose bucket is absent is ErrBucketMissing, never
// ErrNotExist and never an empty listing.
func (su *suite) testBucketMissing(t *testing.T) {
	if su.h.OpenMissing == nil {
		t.Skipf("%s: no OpenMissing in the harness", su.h.Name)
	}
	t.Parallel()
	s := su.h.OpenMissing(t)
	ctx := t.Context()
	check := func(op string, err error) {
		t.Helper()
		wantKind(t, err, store.ErrBucketMissing, op+" on a missing bucket")
		if errors.Is(err, store.ErrNotExist) {
			t.Errorf("%s on a missing bucket: %v also unwraps to ErrNotExist", op, err)
		}
	}
	_, err := s.Get(ctx, "k", nil)
	check("get", err)
	_, err = s.Head(ctx, "k")
	check("head", err)
	_, err = s.Put(ctx, "k", bytes.NewReader([]byte("x")), &store.PutOptions{Size: 1})
	check("put", err)
	_, err = s.Put(ctx, "k", bytes.NewReader([]byte("x")), &store.PutOptions{Size: 1, IfNoneMatch: true})
	check("conditional put", err)
	_, err = s.Put(ctx, "k", onlyReader{bytes.NewReader([]byte("x"))}, &store.PutOptions{Size: -1})
	check("put of unknown size", err)
	check("delete", s.Delete(ctx, "k", nil))
	page, err := s.List(ctx, &store.ListOptions{})
	check("list", err)
	if err == nil {
		t.Errorf("list on a missing bucket returned a page of %d objects instead of failing", len(page.Objects))
	}
	_, err = s.Copy(ctx, "k", "k2", nil)
	check("copy", err)
}

// testCancelled: an op under a cancelled context returns the context's error, not a store
// kind, and a put writes nothing.
func (su *suite) testCancelled(t *testing.T) {
	s := su.open(t)
	putBytes(t, s, "k", []byte("x"), nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", op, err)
		} else if code := errcode.NameOf(err); code != "" {
			t.Errorf("%s with a cancelled context: %v carries code %s, want the bare context error", op, err, code)
		}
	}
	_, err := s.Put(ctx, "new", bytes.NewReader([]byte("y")), &store.PutOptions{Size: 1})
	check("put", err)
	_, err = s.Put(ctx, "new2", bytes.NewReader([]byte("y")), &store.PutOptions{Size: 1, IfNoneMatch: true})
	check("conditional put", err)
	_, err = s.Get(ctx, "k", nil)
	check("get", err)
	_, err = s.Head(ctx, "k")
	check("head", err)
	_, err = s.List(ctx, &store.ListOptions{})
	check("list", err)
	check("delete", s.Delete(ctx, "k", nil))
	wantAbsent(t, s, "new", "after a cancelled put")
	wantAbsent(t, s, "new2", "after a cancelled conditional put")
	wantContent(t, s, "k", []byte("x"), "after a cancelled delete")
}
