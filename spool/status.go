package spool

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/wharfdata/wharf/internal/flock"
)

// Status is a read-only view of a spool, for `wharf spool status` and monitoring.
type Status struct {
	Dir      string    `json:"dir"`
	Format   int       `json:"format"`
	Epoch    string    `json:"epoch"` // 16 hex digits
	Created  time.Time `json:"created"`
	Replay   string    `json:"replay,omitempty"` // a replay spool's replay id
	Next     uint64    `json:"next_sequence"`    // the first sequence number of the next file
	Files    Stats     `json:"files"`            // files and bytes per state
	Records  int       `json:"catalog_records"`
	Oldest   *File     `json:"oldest_pending,omitempty"` // the eligible file with the lowest First
	OldestAt time.Time `json:"-"`                        // when ReadStatus measured Age
	// OldestAge is how long the oldest pending file has waited since it was added.
	OldestAge time.Duration `json:"-"`
	AgeSec    float64       `json:"oldest_pending_age_seconds,omitempty"`
	Owner     Owner         `json:"owner"`
	Warnings  []string      `json:"warnings,omitempty"` // a torn last catalog line
}

// Owner says whether a process owns the spool (holds ship.lock) and which.
type Owner struct {
	Held bool   `json:"held"`
	PID  int    `json:"pid,omitempty"` // as the owner wrote it into the lock file
	Lock string `json:"lock"`          // the lock file's path
}

// ReadStatus reads the spool at dir without owning it: it takes neither ship.lock nor the
// catalog's lock for writing, and changes nothing (a torn last line is reported in Warnings,
// not removed). Errors: ErrNotSpool, ErrCorrupt (a damaged catalog line, by path and line),
// store.ErrForbidden, ErrIO.
func ReadStatus(dir string) (Status, error) {
	const op = "status"
	info, err := readInfo(op, absDir(dir))
	if err != nil {
		return Status{}, err
	}
	catPath := filepath.Join(info.Dir, CatalogFile)
	cat, err := os.Open(catPath)
	if err != nil {
		return Status{}, ioErr(op, catPath, err)
	}
	defer cat.Close()
	ctx, cancel := context.WithTimeout(context.Background(), catalogLockWait)
	defer cancel()
	if err := flockCtx(ctx, cat, false); err != nil {
		return Status{}, ioErr(op, catPath, err)
	}
	rd := &reader{path: catPath, st: newState(info.Dir)}
	err = rd.read(op, cat)
	flock.Unlock(cat)
	if err != nil {
		return Status{}, err
	}
	st := Status{Dir: info.Dir, Format: info.Format, Epoch: info.EpochHex(), Created: info.Created, Replay: info.Replay,
		Next: rd.st.next, Files: rd.st.stats, Records: rd.line, Owner: readOwner(info.Dir)}
	if rd.torn != nil {
		st.Warnings = append(st.Warnings, rd.torn.warning(catPath))
	}
	if f, ok := rd.st.oldest(Eligible); ok {
		st.Oldest = &f
		st.OldestAt = time.Now().UTC()
		st.OldestAge = max(0, st.OldestAt.Sub(f.Added))
		st.AgeSec = st.OldestAge.Seconds()
	}
	return st, nil
}

// readOwner tests ship.lock: a lock it cannot share is held by an owner.
func readOwner(dir string) Owner {
	o := Owner{Lock: filepath.Join(dir, LockFile)}
	f, err := os.Open(o.Lock)
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		return o
	}
	defer f.Close()
	busy, err := flock.TryLock(f, false)
	if err != nil {
		return o
	}
	if !busy {
		flock.Unlock(f)
		return o
	}
	o.Held, o.PID = true, readPID(o.Lock)
	return o
}
