package spool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wharfdata/wharf/internal/flock"
)

// OpenOptions configures Open.
type OpenOptions struct {
	// Logger receives warnings (a torn catalog line, files removed by the clean-up); nil: none.
	Logger *slog.Logger
	// GroupDelay is how long the leader of a group commit of Uploaded calls waits for more
	// calls to join before it writes and fsyncs: fewer, larger groups (fewer fsyncs) for a
	// caller that does not wait on each record, at the cost of that much later returns.
	// 0: none.
	GroupDelay time.Duration
}

// Spool is a spool opened by its owner, the one process that ships its files. Its methods are
// safe for concurrent use.
type Spool struct {
	info Info
	log  *slog.Logger
	lock *os.File // ship.lock, flocked for as long as the Spool is open

	mu         sync.Mutex // guards what follows; a group commit's leader holds it
	cat        *os.File   // catalog.log, O_APPEND
	rd         *reader
	warnedTorn int64 // the offset of the torn line last warned about
	closed     bool

	// unfinished are files recorded finalized whose eligible record could not be written when
	// they were found (a full file system): each catalog read tries again (mu).
	unfinished []uint64
	// deferred holds the deleted records of removals made since the last catalog write, one
	// line each: the next write carries them (mu). See Remove.
	deferred  []byte
	deferredN int
	// reserveFailed is set while the catalog's reserve cannot be kept (mu): warned about once.
	reserveFailed bool

	// The group commit of Uploaded (group.go).
	groupDelay time.Duration
	gmu        sync.Mutex    // guards queue
	queue      []*commitReq  // requests waiting for a group
	lead       chan struct{} // holds a token while a caller leads a group
}

// ownerLockTries and ownerLockPause bound how long Open waits for ship.lock: long enough to
// ride out a `wharf spool status` testing it, short enough to refuse a real owner at once.
const (
	ownerLockTries = 10
	ownerLockPause = 25 * time.Millisecond
	// catalogLockWait bounds the wait for the catalog lock in Open and ReadStatus: an adder
	// holds it for a few fsyncs.
	catalogLockWait = time.Minute
)

// Open opens the spool at dir as its owner: it takes ship.lock (writing its PID into it),
// replays the catalog, makes eligible any file whose add stopped between its two records,
// checks that every file not yet uploaded is in ready/ with its recorded size, and removes what
// interrupted adds left behind (unlocked files in tmp/, unrecorded files in ready/ named like
// spool files; the sources of those adds were kept).
//
// Errors: ErrNotSpool (naming the path, and saying to run `wharf spool init`), ErrLocked
// (naming ship.lock and the owner's PID), ErrCorrupt (a damaged catalog line, named by path
// and line, or a missing or resized ready file, named by path), store.ErrForbidden (the
// spool is not writable), ErrIO.
func Open(dir string, opts OpenOptions) (*Spool, error) {
	const op = "open"
	info, err := readInfo(op, absDir(dir))
	if err != nil {
		return nil, err
	}
	s := &Spool{info: info, log: orDiscard(opts.Logger), warnedTorn: -1, lead: make(chan struct{}, 1), groupDelay: opts.GroupDelay}
	if err := s.takeOwnerLock(); err != nil {
		return nil, err
	}
	catPath := filepath.Join(info.Dir, CatalogFile)
	s.cat, err = os.OpenFile(catPath, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		s.releaseOwnerLock()
		return nil, ioErr(op, catPath, err)
	}
	s.rd = &reader{path: catPath, st: newState(info.Dir)}
	ctx, cancel := context.WithTimeout(context.Background(), catalogLockWait)
	defer cancel()
	err = s.locked(ctx, op, func() error {
		if err := s.catchUp(op); err != nil {
			return err
		}
		if err := s.cleanUp(); err != nil {
			return err
		}
		s.reserve()
		return nil
	})
	if err != nil {
		s.cat.Close()
		s.releaseOwnerLock()
		return nil, err
	}
	return s, nil
}

// takeOwnerLock flocks ship.lock and writes this process's PID into it.
func (s *Spool) takeOwnerLock() error {
	const op = "open"
	path := filepath.Join(s.info.Dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return ioErr(op, path, err)
	}
	for try := 1; ; try++ {
		busy, err := flock.TryLock(f, true)
		if err != nil {
			f.Close()
			return ioErr(op, path, err)
		}
		if !busy {
			break
		}
		if try == ownerLockTries {
			f.Close()
			return newErr(op, path, ErrLocked, fmt.Errorf("%s; one process at a time owns a spool", describeOwner(readPID(path))))
		}
		time.Sleep(ownerLockPause)
	}
	if err := writePID(f, os.Getpid()); err != nil {
		if errors.Is(ioErr(op, path, err), ErrFull) {
			// The flock is the lock; the PID only tells others who holds it. A full disk
			// must not keep the one process that can free it from starting.
			s.log.Warn("spool: the owner's PID could not be written into the lock file (no space left); the lock is held all the same",
				"path", path, "error", err)
		} else {
			flock.Unlock(f)
			f.Close()
			return ioErr(op, path, err)
		}
	}
	s.lock = f
	return nil
}

// pidField is the width of the PID in ship.lock: it is written in place, padded with spaces,
// and blanked rather than truncated on release, so that the lock file keeps its block and
// taking the lock needs no space on a full file system.
const pidField = 20

// writePID writes pid into ship.lock, padded to pidField; 0 writes blanks. A longer file (an
// older layout) is cut to the field.
func writePID(f *os.File, pid int) error {
	b := []byte(strings.Repeat(" ", pidField) + "\n")
	if pid > 0 {
		copy(b, strconv.Itoa(pid))
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > int64(len(b)) {
		if err := f.Truncate(int64(len(b))); err != nil {
			return err
		}
	}
	_, err := f.WriteAt(b, 0)
	return err
}

func describeOwner(pid int) string {
	if pid <= 0 {
		return "held by another process (its PID is not recorded yet)"
	}
	return fmt.Sprintf("held by PID %d", pid)
}

// readPID reads the PID an owner wrote into ship.lock; 0 if there is none.
func readPID(path string) int {
	for range 3 { // an owner that just took the lock may not have written its PID yet
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0
}

// releaseOwnerLock blanks the PID in ship.lock (no stale PID) and releases it.
func (s *Spool) releaseOwnerLock() error {
	err := writePID(s.lock, 0)
	if errors.Is(ioErr("close", s.lock.Name(), err), ErrFull) {
		err = nil // the PID is not cleared: readers find the lock free all the same
	}
	flock.Unlock(s.lock)
	if cerr := s.lock.Close(); err == nil {
		err = cerr
	}
	return err
}

// locked runs fn with the catalog lock held.
func (s *Spool) locked(ctx context.Context, op string, fn func() error) error {
	if err := flockCtx(ctx, s.cat, true); err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return newErr(op, s.rd.path, ErrIO, fmt.Errorf("the catalog lock stayed busy for %s", catalogLockWait))
		}
		return ioErr(op, s.rd.path, err)
	}
	defer flock.Unlock(s.cat)
	return fn()
}

// catchUp applies the records appended since the last read (the catalog lock held), makes
// eligible the new files whose add stopped after the finalized record, and checks that each
// new file not yet uploaded is in ready/ with its size.
func (s *Spool) catchUp(op string) error {
	st := s.rd.st
	firstNew := st.next
	if err := s.rd.read(op, s.cat); err != nil {
		return err
	}
	if t := s.rd.torn; t != nil && t.Offset != s.warnedTorn {
		s.warnedTorn = t.Offset
		s.log.Warn("spool: "+t.warning(s.rd.path), "path", s.rd.path, "line", t.Line)
	}
	var finalized []uint64
	for i := len(st.order) - 1; i >= 0 && st.order[i] >= firstNew; i-- {
		f := st.files[st.order[i]]
		if f == nil || f.State > Eligible {
			continue
		}
		if err := checkReady(op, f); err != nil {
			return err
		}
		if f.State == Finalized {
			s.log.Warn("spool: making eligible a file whose add stopped after its finalized record", "path", f.Path, "id", f.ID)
			finalized = append(finalized, f.ID)
		}
	}
	slices.Reverse(finalized)
	return s.makeEligible(op, append(s.unfinished, finalized...))
}

// makeEligible appends the eligible records of files whose add stopped after their finalized
// record (the catalog lock held, everything read). A full file system is not an error here:
// the files wait, unfinished, for the next catalog read, and the owner carries on (with the
// files it has) rather than fail to start.
func (s *Spool) makeEligible(op string, ids []uint64) error {
	s.unfinished = nil
	for i, id := range ids {
		f := s.rd.st.files[id]
		if f == nil || f.State != Finalized {
			continue
		}
		err := s.appendOwn(op, &record{Type: recEligible, ID: id, At: time.Now().UTC()})
		if errors.Is(err, ErrFull) {
			s.log.Warn("spool: no space left for the eligible record of a file; it waits for the next catalog read", "path", f.Path, "id", id, "error", err)
			s.unfinished = ids[i:]
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkReady checks that a file waiting for its upload is in ready/ with its recorded size.
func checkReady(op string, f *File) error {
	fi, err := os.Stat(f.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return newErr(op, f.Path, ErrCorrupt, fmt.Errorf("missing: the catalog records file %d (%s) as not yet uploaded; restore the file, nothing else has a copy", f.ID, f.State))
	case err != nil:
		return ioErr(op, f.Path, err)
	case fi.Size() != f.Size:
		return newErr(op, f.Path, ErrCorrupt, fmt.Errorf("%d bytes, but the catalog records %d for file %d: it was changed after it was spooled", fi.Size(), f.Size, f.ID))
	}
	return nil
}

// appendOwn appends one of the owner's records (the catalog lock held, everything read),
// cutting a torn last line first, and applies it.
func (s *Spool) appendOwn(op string, rec *record) error {
	if err := s.cutTorn(op); err != nil {
		return err
	}
	if err := s.writeDeferred(op, nil); err != nil {
		return err
	}
	end, err := appendRecord(s.cat, s.rd.off, rec)
	if err != nil {
		return ioErr(op, s.rd.path, err)
	}
	if err := s.rd.st.apply(rec); err != nil {
		return lineErr(op, s.rd.path, s.rd.line+1, err)
	}
	s.rd.off = end
	s.rd.line++
	s.reserve()
	return nil
}

// catalogReserve is how much of the catalog's file is kept allocated past its end (about 400
// files' uploaded and deleted records), so that the owner can record uploads and removals on
// a file system that producers filled: the removals then free the space of the files.
const catalogReserve = 128 << 10

// reserve tops the catalog's reserve up, the catalog lock held (mu). A file system too full
// for it is warned about once, until it has room again.
func (s *Spool) reserve() {
	err := reserveSpace(s.cat, s.rd.off, catalogReserve)
	switch {
	case err == nil:
		s.reserveFailed = false
	case !s.reserveFailed:
		s.reserveFailed = true
		s.log.Warn("spool: the catalog's reserve for records cannot be kept: the spool's file system is (nearly) full",
			"path", s.rd.path, "error", err)
	}
}

// spoolName matches the names of the files an add places in ready/<dataset>/.
var spoolName = regexp.MustCompile(`^[0-9]{20}_[0-9]{20}\.[a-z0-9]{1,16}(\.[a-z0-9]{1,16})?$`)

// cleanUp removes what interrupted adds left (the catalog lock held, so no add is between its
// rename and its records): files in tmp/ that no live add holds locked, and files in ready/
// named like spool files that the catalog does not record. Other unrecorded files in ready/
// are left alone, with a warning.
func (s *Spool) cleanUp() error {
	tmp := filepath.Join(s.info.Dir, TmpDir)
	des, err := os.ReadDir(tmp)
	if err != nil {
		return ioErr("open", tmp, err)
	}
	for _, de := range des {
		s.removeAbandoned(filepath.Join(tmp, de.Name()))
	}
	recorded := map[string]bool{}
	for _, f := range s.rd.st.files {
		recorded[f.Name] = true
	}
	ready := filepath.Join(s.info.Dir, ReadyDir)
	dsets, err := os.ReadDir(ready)
	if err != nil {
		return ioErr("open", ready, err)
	}
	for _, ds := range dsets {
		if !ds.IsDir() {
			s.log.Warn("spool: a file in ready/ that no add placed; it is never shipped", "path", filepath.Join(ready, ds.Name()))
			continue
		}
		files, err := os.ReadDir(filepath.Join(ready, ds.Name()))
		if err != nil {
			return ioErr("open", filepath.Join(ready, ds.Name()), err)
		}
		for _, de := range files {
			name := ReadyDir + "/" + ds.Name() + "/" + de.Name()
			path := filepath.Join(ready, ds.Name(), de.Name())
			switch {
			case recorded[name]:
			case !de.Type().IsRegular() || !spoolName.MatchString(de.Name()):
				s.log.Warn("spool: a file in ready/ that no add placed; it is never shipped", "path", path)
			default:
				s.log.Warn("spool: removing an unrecorded file an interrupted add left in ready/ (its source was kept)", "path", path)
				if err := os.Remove(path); err != nil {
					return ioErr("open", path, err)
				}
			}
		}
	}
	return nil
}

// removeAbandoned removes a file of tmp/ unless a live add or Writer holds its flock.
func (s *Spool) removeAbandoned(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return
	}
	if busy, err := flock.TryLock(f, true); err != nil || busy {
		return
	}
	defer flock.Unlock(f)
	s.log.Warn("spool: removing a temporary file an interrupted add left (its source was kept)", "path", path)
	_ = os.Remove(path)
}

// Info returns what spool.json records.
func (s *Spool) Info() Info { return s.info }

// Epoch returns the spool's epoch, random and made once at Init.
func (s *Spool) Epoch() uint64 { return s.info.Epoch }

// Dir returns the spool's absolute path.
func (s *Spool) Dir() string { return s.info.Dir }

// Refresh reads the records producers appended since the last read, and checks their files as
// Open does. Errors: ErrCorrupt, ErrIO, ErrState (closed), or ctx's error.
//
// Refresh also writes the deleted records of the removals made since the last catalog write,
// with one fsync; a failure to (a full file system) is logged and tried again by the next
// write, not returned: those records can be lost without harm (see Remove).
func (s *Spool) Refresh(ctx context.Context) error {
	return s.do(ctx, "refresh", func() error {
		if err := s.writeDeferred("refresh", nil); err != nil {
			s.log.Warn("spool: writing the deleted records of removed files failed; the next catalog write carries them", "path", s.rd.path, "error", err)
		}
		return nil
	})
}

// do runs fn under the mutex and the catalog lock, after catching up on the catalog.
func (s *Spool) do(ctx context.Context, op string, fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return newErr(op, s.info.Dir, ErrState, errors.New("the spool is closed"))
	}
	return s.locked(ctx, op, func() error {
		if err := s.catchUp(op); err != nil {
			return err
		}
		return fn()
	})
}

// Pending returns the eligible files not yet uploaded, oldest (lowest First) first.
func (s *Spool) Pending() []File { return s.list(Eligible) }

// PendingN returns the first n of the eligible files not yet uploaded, oldest (lowest First)
// first; n ≤ 0 returns them all.
func (s *Spool) PendingN(n int) []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rd.st.listN(Eligible, n)
}

// Waiting sums the eligible files not yet uploaded, without copying them: how many, their
// bytes, and the earliest event time among them (zero when there are none).
func (s *Spool) Waiting() (files, bytes int64, oldest time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rd.st.waiting(Eligible)
}

// Retained returns the uploaded files still in ready/, oldest first.
func (s *Spool) Retained() []File { return s.list(Uploaded) }

func (s *Spool) list(st State) []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rd.st.list(st)
}

// Get returns the file with id, unless it is unknown or deleted.
func (s *Spool) Get(id uint64) (File, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.rd.st.files[id]; f != nil {
		return *f, true
	}
	return File{}, false
}

// Stats counts the files and bytes in each state.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rd.st.stats
}

// Next returns the first sequence number the next file will get.
func (s *Spool) Next() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rd.st.next
}

// Uploaded records that the file id is in the store at key: an uploaded record, appended and
// fsynced before Uploaded returns. outcome says how the upload ended (the ship service writes
// "ok" or "conflict_equal"). Concurrent calls share one write and one fsync (a group commit),
// each returning only once an fsync covering its own record has returned; a failed write or
// fsync fails every call of its group, and none of their records stays. ctx bounds the wait
// for a group to take the record, not the group's write and fsync. Errors: ErrState (the file
// is not eligible: unknown, already uploaded or not yet eligible), ErrInput (no key or
// outcome), ErrCorrupt, ErrFull (no space left for the record, even in the catalog's
// reserve), ErrIO, ctx's error.
func (s *Spool) Uploaded(ctx context.Context, id uint64, key, etag, outcome string) error {
	if key == "" || outcome == "" {
		return newErr(opUploaded, s.info.Dir, ErrInput, fmt.Errorf("file %d: an uploaded record needs a key and an outcome", id))
	}
	return s.commit(ctx, &commitReq{op: opUploaded, id: id, key: key, etag: etag, outcome: outcome})
}

// want checks that file id is in state st.
func (s *Spool) want(op string, id uint64, st State) error {
	f := s.rd.st.files[id]
	if f == nil {
		return newErr(op, s.info.Dir, ErrState, fmt.Errorf("no file %d in the spool (never added, or already deleted)", id))
	}
	if f.State != st {
		why := ""
		if op == "remove" {
			why = "; a file is removed only after its upload is recorded"
		}
		return newErr(op, f.Path, ErrState, fmt.Errorf("file %d is %s, not %s%s", id, f.State, st, why))
	}
	return nil
}

// Close releases the spool: the catalog, and ship.lock (emptied of the PID first).
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if len(s.deferred) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), catalogLockWait)
		if err := s.locked(ctx, "close", func() error { return s.writeDeferred("close", nil) }); err != nil {
			s.log.Warn("spool: the deleted records of removed files could not be written; the next owner records them again", "path", s.rd.path, "error", err)
		}
		cancel()
	}
	s.closed = true
	err := s.cat.Close()
	if lerr := s.releaseOwnerLock(); err == nil {
		err = lerr
	}
	if err != nil {
		return ioErr("close", s.info.Dir, err)
	}
	return nil
}
