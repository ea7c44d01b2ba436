//go:build unix

package flock_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wharfdata/wharf/internal/flock"
)

func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Two descriptors of one file in one process exclude each other as two processes would, and a
// closed descriptor's lock is gone.
func TestLocksOrderDescriptorsOfOneProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	a, b := open(t, path), open(t, path)
	if busy, err := flock.TryLock(a, true); busy || err != nil {
		t.Fatalf("first exclusive lock: busy=%v err=%v", busy, err)
	}
	if busy, err := flock.TryLock(b, false); !busy || err != nil {
		t.Fatalf("shared lock under an exclusive one: busy=%v err=%v, want busy", busy, err)
	}
	flock.Unlock(a)
	if busy, err := flock.TryLock(b, false); busy || err != nil {
		t.Fatalf("shared lock after unlock: busy=%v err=%v", busy, err)
	}
	c := open(t, path)
	if busy, err := flock.TryLock(c, false); busy || err != nil {
		t.Fatalf("two shared locks: busy=%v err=%v", busy, err)
	}
	if busy, _ := flock.TryLock(a, true); !busy {
		t.Fatal("exclusive lock under shared ones was granted")
	}
	b.Close()
	c.Close()
	if busy, err := flock.TryLock(a, true); busy || err != nil {
		t.Fatalf("exclusive lock after the holders closed: busy=%v err=%v", busy, err)
	}
}
