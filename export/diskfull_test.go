package export

import (
	"context"
	"errors"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// TestDiskFullNamesPathAndDisk exports 4 MB of incompressible text to a 1 MiB tmpfs: the
// error is WHARF_EXPORT_WRITE_FAILED and names the part's path and the disk (tmpfs, where it
// is mounted, its space), not a store that is "unavailable". It needs root to mount (it skips
// otherwise).
func TestDiskFullNamesPathAndDisk(t *testing.T) {
	mnt := t.TempDir()
	if out, err := osexec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := osexec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, out)
		}
	})
	path := filepath.Join(t.TempDir(), "src.db")
	db := openDB(t, path)
	exec(t, db, `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`)
	exec(t, db, `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 20000)
  INSERT INTO t SELECT i, hex(randomblob(100)) FROM g`)
	e := Export{Name: "t", Source: "sqlite://" + path, Table: "t", ChunkKey: "id", Destination: "file://" + mnt + "/out/"}
	_, err := Run(context.Background(), e, Options{StatePath: filepath.Join(t.TempDir(), "state.db")})
	if !errors.Is(err, ErrWrite) || !errors.Is(err, syscall.ENOSPC) || errcode.NameOf(err) != "WHARF_EXPORT_WRITE_FAILED" {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{"no space left on device", filepath.Join(mnt, "out", "part-"), "tmpfs", "mounted at " + mnt, "free of 1.0 MiB"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, store.ErrUnavailable.Error()) {
		t.Errorf("message calls a full disk %q: %s", store.ErrUnavailable, msg)
	}
}
