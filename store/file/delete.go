package file

import (
	"context"
	"os"
	"path/filepath"

	"github.com/wharfdata/wharf/internal/atomicfile"
	"github.com/wharfdata/wharf/store/driver"
)

// Delete removes the file at key and its sidecar, then the directories that become empty.
// With opts.IfMatch it removes only the version with that ETag (a missing key fails the
// condition); without, deleting a missing key succeeds.
func (s *Store) Delete(ctx context.Context, key string, opts *driver.DeleteOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r, err := s.openRoot(ctx, "delete", key, false)
	if err == errNoRoot { // an empty store: the key is missing
		if err := validKey("delete", key); err != nil {
			return err
		}
		if opts.IfMatch != "" {
			return precondition("delete", key, "key does not exist")
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	if err := checkKey(r, "delete", key); err != nil {
		return err
	}
	release, err := lock(ctx, r, "delete", key, true)
	if err != nil {
		return err
	}
	defer release()
	w := &writer{r: r, op: "delete", key: key}
	if opts.IfMatch != "" {
		if err := w.check(false, opts.IfMatch); err != nil {
			return err
		}
	}
	return remove(r, key)
}

// remove deletes key's file and sidecar; the exclusive lock is held.
func remove(r *os.Root, key string) error {
	_, exists, _, err := current(r, "delete", key)
	if err != nil || !exists {
		return err
	}
	if err := r.Remove(filepath.FromSlash(key)); err != nil && !isNotExist(err) {
		return mapErr("delete", key, err)
	}
	if err := r.Remove(sidecarPath(key)); err != nil && !isNotExist(err) {
		return mapErr("delete", key, err)
	}
	dir := parentOf(key)
	if err := atomicfile.SyncDir(r, filepath.FromSlash(dir)); err != nil {
		return mapErr("delete", key, err)
	}
	prune(r, dir)
	return nil
}

// prune removes dir and its parents while they are empty, as an object store has no empty
// directories. Failing to remove one (it is not empty) ends it.
func prune(r *os.Root, dir string) {
	for d := dir; d != "."; d = parentOf(d) {
		if r.Remove(filepath.FromSlash(d)) != nil {
			return
		}
		_ = atomicfile.SyncDir(r, filepath.FromSlash(parentOf(d)))
	}
}
