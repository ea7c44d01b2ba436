package file

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/wharfdata/wharf/internal/flock"
)

// maxLockWait bounds the pause between attempts to take a busy lock.
const maxLockWait = 2 * time.Millisecond

// lock takes the store's flock, shared for reads or exclusive for check-and-replace, and
// returns its release. flock locks conflict between open file descriptions, so the lock orders
// goroutines of one process as well as separate processes. A reader of a root that no writer
// has prepared (no lock file, or none it may open) proceeds without the lock: no wharf writer
// has run there.
func lock(ctx context.Context, r *os.Root, op, key string, exclusive bool) (release func(), err error) {
	f, err := openLockFile(r, exclusive)
	if err != nil {
		if !exclusive && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)) {
			return func() {}, nil
		}
		return nil, mapErr(op, key, err)
	}
	wait := 50 * time.Microsecond
	for {
		busy, err := flock.TryLock(f, exclusive)
		if err != nil {
			f.Close()
			return nil, mapErr(op, key, err)
		}
		if !busy {
			return func() { flock.Unlock(f); f.Close() }, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, maxLockWait)
	}
}

func openLockFile(r *os.Root, exclusive bool) (*os.File, error) {
	name := filepath.FromSlash(lockFile)
	if !exclusive {
		return r.Open(name)
	}
	if err := r.MkdirAll(filepath.FromSlash(metaDir), 0o777); err != nil {
		return nil, err
	}
	return r.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o666)
}
