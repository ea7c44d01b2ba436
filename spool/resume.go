package spool

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/wharfdata/wharf/internal/flock"
)

// finishMove looks in ready/<dataset>/ for the file src is a hard link of: a move that a crash
// interrupted after the link was placed. If the catalog records that file, finishMove makes it
// eligible if it is not yet, removes src and returns it with done set. If the link is not
// recorded, it removes the link and returns done unset, for Add to spool src anew.
func finishMove(ctx context.Context, info Info, src string, id fileID, dataset string, log *slog.Logger) (File, bool, error) {
	const op = "add"
	dsDir := filepath.Join(info.Dir, ReadyDir, dataset)
	des, err := os.ReadDir(dsDir)
	if err != nil {
		return File{}, false, nil // no such dataset yet: nothing to finish
	}
	var match string
	for _, de := range des {
		fi, err := de.Info()
		if err != nil {
			continue
		}
		if fid, ok := idOf(fi); ok && fid.dev == id.dev && fid.ino == id.ino {
			match = de.Name()
			break
		}
	}
	if match == "" {
		return File{}, false, nil
	}
	catPath := filepath.Join(info.Dir, CatalogFile)
	cat, err := os.OpenFile(catPath, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return File{}, false, ioErr(op, catPath, err)
	}
	defer cat.Close()
	if err := flockCtx(ctx, cat, true); err != nil {
		return File{}, false, ioErr(op, catPath, err)
	}
	defer flock.Unlock(cat)
	tl, err := readTail(op, catPath, cat)
	if err != nil {
		return File{}, false, err
	}
	rd := &reader{path: catPath, st: newState(info.Dir)}
	if err := rd.read(op, cat); err != nil {
		return File{}, false, err
	}
	name := ReadyDir + "/" + dataset + "/" + match
	var f *File
	for _, x := range rd.st.files {
		if x.Name == name {
			f = x
		}
	}
	full := filepath.Join(dsDir, match)
	if f == nil {
		// An unrecorded link that a crash left behind: take it out and add src anew.
		if err := os.Remove(full); err != nil {
			return File{}, false, ioErr(op, full, err)
		}
		return File{}, false, syncDir(dsDir)
	}
	if f.State == Finalized {
		if _, err := appendRecord(cat, tl.end, &record{Type: recEligible, ID: f.ID, At: time.Now().UTC()}); err != nil {
			return File{}, false, ioErr(op, catPath, err)
		}
		f.State = Eligible
	}
	if err := os.Remove(src); err != nil {
		return *f, true, ioErr(op, src, err)
	}
	_ = syncDir(filepath.Dir(src))
	log.Info("spool: finished an add that a crash interrupted", "source", src, "path", f.Name, "id", f.ID)
	return *f, true, nil
}
