package storetest

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/crc32c"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

func (su *suite) testPut(t *testing.T) {
	t.Run("RoundTrip", su.testRoundTrip)
	t.Run("UnknownSize", su.testUnknownSize)
	t.Run("ContentType", su.testContentType)
	t.Run("Metadata", su.testMetadata)
	t.Run("PutIDOnConditionalPut", su.testPutID)
	t.Run("InfoConsistent", su.testInfoConsistent)
	t.Run("Overwrite", su.testOverwrite)
	t.Run("Checksum", su.testChecksum)
	t.Run("ChecksumMismatch", su.testChecksumMismatch)
}

// wantChecksum fails t when the head of what put wrote data there carries a CRC-32C that is
// not data's, or none when the harness declares Checksums.
func (su *suite) wantChecksum(t *testing.T, what string, head store.ObjectInfo, data []byte) {
	t.Helper()
	want := crc32c.Format(crc32c.Sum(data))
	switch got := head.CRC32C; {
	case got == "" && su.h.Checksums:
		t.Errorf("%s: head carries no CRC-32C, want %s (Harness.Checksums)", what, want)
	case got != "" && got != want:
		t.Errorf("%s: head carries CRC-32C %s, its bytes have %s", what, got, want)
	}
	if _, ok := head.Metadata[store.MetaCRC32C]; ok {
		t.Errorf("%s: the metadata shows %s; the store gives it as CRC32C", what, store.MetaCRC32C)
	}
}

// testChecksum: an object put whole, of known or unknown size, carries its bytes' CRC-32C.
func (su *suite) testChecksum(t *testing.T) {
	s := su.open(t)
	data := []byte("the bytes of a checksummed object\n")
	for name, body := range map[string]func() (io.Reader, int64){
		"known":   func() (io.Reader, int64) { return bytes.NewReader(data), int64(len(data)) },
		"unknown": func() (io.Reader, int64) { return onlyReader{bytes.NewReader(data)}, -1 },
	} {
		r, size := body()
		if _, err := s.Put(t.Context(), "sum-"+name, r, &store.PutOptions{Size: size}); err != nil {
			t.Fatalf("put (%s size): %v", name, err)
		}
		su.wantChecksum(t, "put of "+name+" size", mustHead(t, s, "sum-"+name), data)
		_, info := getBytes(t, s, "sum-"+name, &store.GetOptions{Offset: 1, Length: 3})
		su.wantChecksum(t, "ranged get of "+name+" size", info, data)
	}
}

// testChecksumMismatch: a put told the CRC-32C its body must have (a copy's source's) fails
// with ErrChecksumMismatch when the body has another, and leaves no object; with the right
// one it succeeds.
func (su *suite) testChecksumMismatch(t *testing.T) {
	s := su.open(t)
	data := []byte("bytes that were damaged on the way")
	wrong := crc32c.Format(crc32c.Sum([]byte("the bytes the source had")))
	for name, size := range map[string]int64{"known": int64(len(data)), "unknown": -1} {
		key := "mismatch-" + name
		_, err := s.Put(t.Context(), key, onlyReader{bytes.NewReader(data)}, &store.PutOptions{Size: size, CRC32C: wrong})
		if !errors.Is(err, store.ErrChecksumMismatch) {
			t.Fatalf("put (%s size) with a CRC-32C its body lacks: %v, want ErrChecksumMismatch", name, err)
		}
		if _, err := s.Head(t.Context(), key); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("after the refused put (%s size): head %v, want ErrNotExist", name, err)
		}
	}
	right := crc32c.Format(crc32c.Sum(data))
	if _, err := s.Put(t.Context(), "matched", onlyReader{bytes.NewReader(data)}, &store.PutOptions{Size: int64(len(data)), CRC32C: right}); err != nil {
		t.Fatalf("put with its own CRC-32C: %v", err)
	}
}

// testRoundTrip puts bodies of several shapes and reads each back byte for byte.
func (su *suite) testRoundTrip(t *testing.T) {
	s := su.open(t)
	binary := make([]byte, 512)
	for i := range binary {
		binary[i] = byte(i)
	}
	bodies := map[string][]byte{
		"empty":      {},
		"small":      []byte("hello, wharf\n"),
		"binary":     binary,
		"random-1M":  randomBytes(1<<20+7, 1),
		"dir/nested": []byte("a key below a '/'"),
	}
	for key, data := range bodies {
		info := putBytes(t, s, key, data, nil)
		if info.Size != int64(len(data)) {
			t.Errorf("put %q: result Size %d, want %d", key, info.Size, len(data))
		}
		wantContent(t, s, key, data, "round trip")
	}
	// A nil *PutOptions is an unconditional put of a body of unknown size.
	if _, err := s.Put(t.Context(), "nil-opts", bytes.NewReader([]byte("x")), nil); err != nil {
		t.Fatalf("put with nil options: %v", err)
	}
	wantContent(t, s, "nil-opts", []byte("x"), "nil options")
}

// testUnknownSize puts bodies that are not io.Seekers with Size -1.
func (su *suite) testUnknownSize(t *testing.T) {
	s := su.open(t)
	for _, n := range []int{0, 1, 64 << 10} {
		data := randomBytes(n, uint64(n))
		key := fmt.Sprintf("unknown/%d", n)
		info, err := s.Put(t.Context(), key, onlyReader{bytes.NewReader(data)}, &store.PutOptions{Size: -1})
		if err != nil {
			t.Fatalf("put %q of unknown size (%d bytes): %v", key, n, err)
		}
		if info.Size != int64(n) {
			t.Errorf("put %q of unknown size: result Size %d, want %d", key, info.Size, n)
		}
		wantContent(t, s, key, data, "unknown size")
		if h := mustHead(t, s, key); h.Size != int64(n) {
			t.Errorf("head %q: Size %d, want %d", key, h.Size, n)
		}
	}
}

func (su *suite) testContentType(t *testing.T) {
	s := su.open(t)
	const ct = "application/x-ndjson"
	putBytes(t, s, "typed", []byte(`{"a":1}`+"\n"), &store.PutOptions{ContentType: ct})
	if got := mustHead(t, s, "typed").ContentType; got != ct {
		t.Errorf("head: ContentType %q, want %q", got, ct)
	}
	if _, info := getBytes(t, s, "typed", nil); info.ContentType != ct {
		t.Errorf("get: ContentType %q, want %q", info.ContentType, ct)
	}
}

// testMetadata checks that user metadata round-trips with lowercase keys, and that an
// unconditional overwrite without metadata drops the old metadata.
func (su *suite) testMetadata(t *testing.T) {
	s := su.open(t)
	md := map[string]string{"wharf-sha256": "abc123", "run": "r-7", "x2": "two words"}
	putBytes(t, s, "meta", []byte("m"), &store.PutOptions{Metadata: md})
	wantMeta := func(what string, got map[string]string) {
		t.Helper()
		for k, v := range md {
			if got[k] != v {
				t.Errorf("%s: metadata %q = %q, want %q (all: %v)", what, k, got[k], v, got)
			}
		}
		for k := range got {
			if _, ok := md[k]; !ok {
				t.Errorf("%s: unexpected metadata key %q (all: %v)", what, k, got)
			}
		}
	}
	wantMeta("head", mustHead(t, s, "meta").Metadata)
	_, info := getBytes(t, s, "meta", nil)
	wantMeta("get", info.Metadata)

	putBytes(t, s, "meta", []byte("n"), nil)
	if got := mustHead(t, s, "meta").Metadata; len(got) != 0 {
		t.Errorf("after an overwrite without metadata, head still has %v", got)
	}
}

// testPutID checks that a conditional put records a wharf-put-id (added by store.Store.Put)
// that ResolvePut can match, and keeps the caller's own metadata beside it.
func (su *suite) testPutID(t *testing.T) {
	s := su.open(t)
	putBytes(t, s, "cond", []byte("c"), &store.PutOptions{IfNoneMatch: true, Metadata: map[string]string{"owner": "me"}})
	md := mustHead(t, s, "cond").Metadata
	id := md[store.MetaPutID]
	if b, err := hex.DecodeString(id); err != nil || len(b) != 16 {
		t.Errorf("conditional put: metadata %q = %q, want 32 hex digits (all: %v)", store.MetaPutID, id, md)
	}
	if md["owner"] != "me" {
		t.Errorf("conditional put: metadata owner = %q, want %q", md["owner"], "me")
	}
	if _, ok, err := s.ResolvePut(t.Context(), "cond", id); err != nil || !ok {
		t.Errorf("ResolvePut with the put's own id: landed %v, err %v; want true", ok, err)
	}
	if _, ok, err := s.ResolvePut(t.Context(), "cond", driver.NewPutID()); err != nil || ok {
		t.Errorf("ResolvePut with another id: landed %v, err %v; want false", ok, err)
	}
}

// testInfoConsistent checks that Put's result, Head and Get agree on Size and ETag, and that
// LastModified is set and recent.
func (su *suite) testInfoConsistent(t *testing.T) {
	s := su.open(t)
	before := time.Now()
	data := []byte("consistent")
	put := putBytes(t, s, "info", data, nil)
	head := mustHead(t, s, "info")
	_, get := getBytes(t, s, "info", nil)
	if put.Key != "info" || head.Key != "info" || get.Key != "info" {
		t.Errorf("Key: put %q, head %q, get %q; want %q", put.Key, head.Key, get.Key, "info")
	}
	if put.ETag == "" {
		t.Errorf("put returned no ETag")
	}
	for what, info := range map[string]store.ObjectInfo{"put": put, "head": head, "get": get} {
		if info.Size != int64(len(data)) {
			t.Errorf("%s: Size %d, want %d", what, info.Size, len(data))
		}
		if info.ETag != put.ETag {
			t.Errorf("%s: ETag %q, want put's %q", what, info.ETag, put.ETag)
		}
	}
	for what, info := range map[string]store.ObjectInfo{"head": head, "get": get} {
		lm := info.LastModified
		if lm.IsZero() || lm.Before(before.Add(-10*time.Minute)) || lm.After(time.Now().Add(10*time.Minute)) {
			t.Errorf("%s: LastModified %v, want close to %v", what, lm, before)
		}
	}
	if !head.LastModified.Equal(get.LastModified) {
		t.Errorf("LastModified: head %v, get %v", head.LastModified, get.LastModified)
	}
}

// testOverwrite checks that an unconditional put replaces content and changes the ETag.
func (su *suite) testOverwrite(t *testing.T) {
	s := su.open(t)
	first := putBytes(t, s, "k", []byte("first"), nil)
	second := putBytes(t, s, "k", []byte("second, longer"), nil)
	if first.ETag == second.ETag {
		t.Errorf("ETag %q did not change when the content changed", first.ETag)
	}
	info := wantContent(t, s, "k", []byte("second, longer"), "overwrite")
	if info.ETag != second.ETag {
		t.Errorf("get after overwrite: ETag %q, want %q", info.ETag, second.ETag)
	}
}
