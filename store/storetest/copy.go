package storetest

import (
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

func (su *suite) testCopy(t *testing.T) {
	t.Run("Bytes", su.testCopyBytes)
	t.Run("MissingSource", su.testCopyMissing)
	t.Run("IfNoneMatchAbsent", su.testCopyIfNoneMatchAbsent)
	t.Run("IfNoneMatchPresent", su.testCopyIfNoneMatchPresent)
}

// testCopyBytes: store.Copy (server-side where the backend is a Copier) copies the bytes,
// the content type and the user metadata, and leaves the source alone.
func (su *suite) testCopyBytes(t *testing.T) {
	s := su.open(t)
	data := randomBytes(100_000, 3)
	md := map[string]string{"wharf-sha256": "feed", "origin": "src"}
	putBytes(t, s, "src", data, &store.PutOptions{ContentType: "application/octet-stream", Metadata: md})
	info, err := s.Copy(t.Context(), "src", "dir/dst", nil)
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	if info.Size != int64(len(data)) && info.Size != 0 {
		t.Errorf("copy returned Size %d, want %d", info.Size, len(data))
	}
	got := wantContent(t, s, "dir/dst", data, "copy")
	if got.ContentType != "application/octet-stream" {
		t.Errorf("copy: ContentType %q, want %q", got.ContentType, "application/octet-stream")
	}
	for k, v := range md {
		if got.Metadata[k] != v {
			t.Errorf("copy: metadata %q = %q, want %q (all: %v)", k, got.Metadata[k], v, got.Metadata)
		}
	}
	wantContent(t, s, "src", data, "copy source")
	// Overwriting an existing destination unconditionally replaces it.
	putBytes(t, s, "src2", []byte("two"), nil)
	if _, err := s.Copy(t.Context(), "src2", "dir/dst", nil); err != nil {
		t.Fatalf("copy onto an existing key: %v", err)
	}
	wantContent(t, s, "dir/dst", []byte("two"), "copy onto an existing key")
}

func (su *suite) testCopyMissing(t *testing.T) {
	s := su.open(t)
	_, err := s.Copy(t.Context(), "absent", "dst", nil)
	wantKind(t, err, store.ErrNotExist, "copy of a missing source")
	wantAbsent(t, s, "dst", "after a failed copy")
}

// testCopyIfNoneMatchAbsent: a conditional copy onto an absent key copies.
func (su *suite) testCopyIfNoneMatchAbsent(t *testing.T) {
	s := su.open(t)
	putBytes(t, s, "src", []byte("data"), nil)
	if _, err := s.Copy(t.Context(), "src", "dst", &store.PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatalf("conditional copy onto an absent key: %v", err)
	}
	wantContent(t, s, "dst", []byte("data"), "conditional copy")
}

// testCopyIfNoneMatchPresent: a conditional copy onto an existing key fails and leaves it
// wherever conditional puts are enforced, also on servers that ignore a condition on their
// own server-side copy (MinIO, fake-gcs-server): the store streams a conditional copy.
func (su *suite) testCopyIfNoneMatchPresent(t *testing.T) {
	s := su.open(t)
	v := su.verdict(t, probe.CapConditionalCreate)
	putBytes(t, s, "src", []byte("new"), nil)
	putBytes(t, s, "dst", []byte("old"), nil)
	_, err := s.Copy(t.Context(), "src", "dst", &store.PutOptions{IfNoneMatch: true})
	if v == probe.No {
		if err != nil {
			t.Fatalf("conditional creates are not enforced here, but the copy failed: %v", err)
		}
		wantContent(t, s, "dst", []byte("new"), "unenforced conditional copy")
		return
	}
	wantKind(t, err, store.ErrPreconditionFailed, "conditional copy onto an existing key")
	wantContent(t, s, "dst", []byte("old"), "failed conditional copy")
}
