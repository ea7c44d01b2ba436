package storetest

import (
	"testing"

	"github.com/wharfdata/wharf/store"
)

func (su *suite) testDelete(t *testing.T) {
	t.Run("Existing", su.testDeleteExisting)
	t.Run("Missing", su.testDeleteMissing)
	t.Run("OnlyThatKey", su.testDeleteOnlyThatKey)
	t.Run("LeavesNoPrefix", su.testDeleteLeavesNoPrefix)
}

func (su *suite) testDeleteExisting(t *testing.T) {
	s := su.open(t)
	putBytes(t, s, "gone", []byte("soon"), nil)
	if err := s.Delete(t.Context(), "gone", nil); err != nil {
		t.Fatalf("delete: %v", err)
	}
	wantAbsent(t, s, "gone", "after delete")
	wantEmpty(t, s, "after delete")
	// Deleting again, and deleting with empty options, succeed.
	if err := s.Delete(t.Context(), "gone", nil); err != nil {
		t.Errorf("second delete: %v", err)
	}
}

func (su *suite) testDeleteMissing(t *testing.T) {
	s := su.open(t)
	if err := s.Delete(t.Context(), "never/was", nil); err != nil {
		t.Errorf("delete of a missing key: %v, want success", err)
	}
	wantAbsent(t, s, "never/was", "after deleting a missing key")
}

// testDeleteOnlyThatKey: deleting "a/b" leaves "a/bc", "a/b.txt" and "ab" alone. (The suite
// never makes one key both an object and a prefix: a file store cannot.)
func (su *suite) testDeleteOnlyThatKey(t *testing.T) {
	s := su.open(t)
	keys := []string{"a/b", "a/bc", "a/b.txt", "ab"}
	for _, k := range keys {
		putBytes(t, s, k, []byte(k), nil)
	}
	if err := s.Delete(t.Context(), "a/b", nil); err != nil {
		t.Fatalf("delete a/b: %v", err)
	}
	wantAbsent(t, s, "a/b", "after delete")
	for _, k := range keys[1:] {
		wantContent(t, s, k, []byte(k), "neighbour of a deleted key")
	}
}

// testDeleteLeavesNoPrefix: once the only object below x/y/ is deleted, a delimited listing
// shows no x/ prefix (a file store must not list the empty directories left behind).
func (su *suite) testDeleteLeavesNoPrefix(t *testing.T) {
	s := su.open(t)
	putBytes(t, s, "x/y/z", []byte("deep"), nil)
	putBytes(t, s, "top", []byte("top"), nil)
	if err := s.Delete(t.Context(), "x/y/z", nil); err != nil {
		t.Fatalf("delete x/y/z: %v", err)
	}
	page, err := s.List(t.Context(), &store.ListOptions{Delimiter: "/"})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if su.h.EmptyPrefixesLinger {
		// The server keeps the emptied directory (SeaweedFS): assert that real behaviour.
		if len(page.Prefixes) != 1 || page.Prefixes[0] != "x/" || len(page.Objects) != 1 {
			t.Errorf("EmptyPrefixesLinger: listed prefixes %q and %d objects, want [x/] and \"top\"", page.Prefixes, len(page.Objects))
		}
		return
	}
	if len(page.Prefixes) != 0 || len(page.Objects) != 1 || page.Objects[0].Key != "top" {
		t.Errorf("after deleting x/y/z: listed prefixes %q and %d objects, want no prefix and only \"top\"",
			page.Prefixes, len(page.Objects))
	}
}
