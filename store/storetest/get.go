package storetest

import (
	"bytes"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

func (su *suite) testGet(t *testing.T) {
	t.Run("Range", su.testRange)
	t.Run("PinnedCurrent", su.testPinnedCurrent)
	t.Run("PinnedStale", su.testPinnedStale)
}

// testRange reads byte ranges; Info.Size is always the whole object's size.
func (su *suite) testRange(t *testing.T) {
	s := su.open(t)
	data := randomBytes(10_000, 7)
	putBytes(t, s, "r", data, nil)
	tests := []struct {
		name           string
		offset, length int64
		want           []byte
	}{
		{"offset-only", 9_000, 0, data[9_000:]},
		{"offset-and-length", 100, 50, data[100:150]},
		{"length-only", 0, 10, data[:10]},
		{"length-past-end", 9_990, 100, data[9_990:]},
		{"last-byte", 9_999, 1, data[9_999:]},
	}
	for _, tc := range tests {
		got, info := getBytes(t, s, "r", &store.GetOptions{Offset: tc.offset, Length: tc.length})
		if !bytes.Equal(got, tc.want) {
			t.Errorf("%s (%d+%d): got %d bytes, want %d", tc.name, tc.offset, tc.length, len(got), len(tc.want))
		}
		if info.Size != int64(len(data)) {
			t.Errorf("%s: Info.Size %d, want the whole size %d", tc.name, info.Size, len(data))
		}
	}
	_, _, err := tryGet(t, s, "r", &store.GetOptions{Offset: -1})
	wantKind(t, err, store.ErrConfig, "get with a negative offset")
}

// testPinnedCurrent reads with IfMatch set to the current ETag, whole and ranged.
func (su *suite) testPinnedCurrent(t *testing.T) {
	s := su.open(t)
	info := putBytes(t, s, "p", []byte("pinned body"), nil)
	got, gi := getBytes(t, s, "p", &store.GetOptions{IfMatch: info.ETag})
	if string(got) != "pinned body" || gi.ETag != info.ETag {
		t.Errorf("pinned get: %q ETag %q, want %q ETag %q", got, gi.ETag, "pinned body", info.ETag)
	}
	got, _ = getBytes(t, s, "p", &store.GetOptions{IfMatch: info.ETag, Offset: 7})
	if string(got) != "body" {
		t.Errorf("pinned ranged get: %q, want %q", got, "body")
	}
}

// testPinnedStale reads with a stale pin after an overwrite. Where the probe says pinned reads
// are enforced, the read fails with ErrPreconditionFailed; where it says they are not, the
// read succeeds and its Info.ETag must differ from the pin, so a caller comparing can tell.
func (su *suite) testPinnedStale(t *testing.T) {
	s := su.open(t)
	old := putBytes(t, s, "p", []byte("old"), nil)
	cur := putBytes(t, s, "p", []byte("new"), nil)
	got, info, err := tryGet(t, s, "p", &store.GetOptions{IfMatch: old.ETag})
	switch su.verdict(t, probe.CapPinnedRead) {
	case probe.Yes:
		wantKind(t, err, store.ErrPreconditionFailed, "get pinned to a stale ETag")
	default:
		if err != nil {
			t.Fatalf("probe says pinned reads are not enforced, but the stale pinned get failed: %v", err)
		}
		if info.ETag == old.ETag || string(got) != "new" {
			t.Errorf("unenforced stale pin: got %q ETag %q, want %q with ETag %q", got, info.ETag, "new", cur.ETag)
		}
	}
	_, _, err = tryGet(t, s, "missing", &store.GetOptions{IfMatch: old.ETag})
	if err == nil {
		t.Errorf("pinned get of a missing key succeeded")
	}
}
