package storetest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// putBytes puts data at key and fails t on error.
func putBytes(t *testing.T, s *store.Store, key string, data []byte, opts *store.PutOptions) store.ObjectInfo {
	t.Helper()
	info, err := tryPut(t, s, key, data, opts)
	if err != nil {
		t.Fatalf("put %q (%d bytes): %v", key, len(data), err)
	}
	return info
}

// tryPut puts data at key with opts (Size filled in when zero) and returns what Put returned.
func tryPut(t *testing.T, s *store.Store, key string, data []byte, opts *store.PutOptions) (store.ObjectInfo, error) {
	t.Helper()
	o := store.PutOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Size == 0 {
		o.Size = int64(len(data))
	}
	return s.Put(t.Context(), key, bytes.NewReader(data), &o)
}

// getBytes reads key whole (or the range in opts) and fails t on error.
func getBytes(t *testing.T, s *store.Store, key string, opts *store.GetOptions) ([]byte, store.ObjectInfo) {
	t.Helper()
	data, info, err := tryGet(t, s, key, opts)
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return data, info
}

func tryGet(t *testing.T, s *store.Store, key string, opts *store.GetOptions) ([]byte, store.ObjectInfo, error) {
	t.Helper()
	obj, err := s.Get(t.Context(), key, opts)
	if err != nil {
		return nil, store.ObjectInfo{}, err
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if err != nil {
		return nil, obj.Info, fmt.Errorf("reading body: %w", err)
	}
	return data, obj.Info, nil
}

func mustHead(t *testing.T, s *store.Store, key string) store.ObjectInfo {
	t.Helper()
	info, err := s.Head(t.Context(), key)
	if err != nil {
		t.Fatalf("head %q: %v", key, err)
	}
	return info
}

// wantKind fails t unless err is of kind.
func wantKind(t *testing.T, err error, kind *errcode.Code, what string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: succeeded, want %s (%s)", what, kind.Code(), kind)
		return
	}
	if !errors.Is(err, kind) {
		t.Errorf("%s: %v (code %q), want %s", what, err, errcode.NameOf(err), kind.Code())
		return
	}
	if got := errcode.NameOf(err); got != kind.Code() {
		t.Errorf("%s: store.Code = %q, want %q", what, got, kind.Code())
	}
	var e *store.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: %v is not a *store.Error", what, err)
	}
}

// wantContent fails t unless key holds exactly data.
func wantContent(t *testing.T, s *store.Store, key string, data []byte, what string) store.ObjectInfo {
	t.Helper()
	got, info, err := tryGet(t, s, key, nil)
	if err != nil {
		t.Errorf("%s: get %q: %v", what, key, err)
		return info
	}
	if !bytes.Equal(got, data) {
		t.Errorf("%s: %q holds %d bytes %.40q, want %d bytes %.40q", what, key, len(got), got, len(data), data)
	}
	return info
}

// wantAbsent fails t unless Head and Get of key say ErrNotExist.
func wantAbsent(t *testing.T, s *store.Store, key, what string) {
	t.Helper()
	_, err := s.Head(t.Context(), key)
	wantKind(t, err, store.ErrNotExist, what+": head "+key)
	_, _, err = tryGet(t, s, key, nil)
	wantKind(t, err, store.ErrNotExist, what+": get "+key)
}

// wantEmpty fails t unless the store lists no object at all.
func wantEmpty(t *testing.T, s *store.Store, what string) {
	t.Helper()
	all, err := s.ListAll(t.Context(), "")
	if err != nil {
		t.Errorf("%s: list: %v", what, err)
		return
	}
	if len(all) != 0 {
		t.Errorf("%s: store holds %d objects, want none (first %q)", what, len(all), all[0].Key)
	}
}

// randomBytes returns n bytes drawn from a generator seeded with seed.
func randomBytes(n int, seed uint64) []byte {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(key).Read(b)
	return b
}

// onlyReader hides every method but Read (so a body is not an io.Seeker, as a pipe is not).
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
