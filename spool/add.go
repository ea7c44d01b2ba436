package spool

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/wharfdata/wharf/internal/flock"
)

// AddOptions says how Add spools a file.
type AddOptions struct {
	Dataset string    // required: [a-z0-9_-], 1–64 characters
	Time    time.Time // the file's event time (its date=/hour= partition); zero: the source's modification time
	Copy    bool      // copy the source and keep it; otherwise move it in (the source is removed)
	Records uint64    // how many sequence numbers the file carries; 0 means 1
	Ext     string    // the extension to spool it with; "": ExtOf(src)
	// Clock says whether the clock that gave Time was synchronized: ClockSynced or
	// ClockUnsynced as the producer knows it; ClockUnknown (the zero value) asks the kernel
	// when the add starts (ReadClock), and records ClockUnknown where it cannot say.
	Clock  Clock
	Logger *slog.Logger
}

// testHook, set only by this package's tests, is called at named points of an add so that a
// crash test can kill the process there. Nil, as it always is outside tests, it costs nothing.
var testHook func(point string)

func at(point string) {
	if testHook != nil {
		testHook(point)
	}
}

// copyBuf is the buffer of a copy or a hash.
const copyBuf = 256 << 10

// link makes a hard link; the tests replace it to force the copy path.
var link = os.Link

// Add spools the finished file src into the spool at dir and returns it, eligible.
//
// The file is moved in — a hard link into tmp/ where src's file system allows one, otherwise a
// copy — or, with opts.Copy, copied; hashed with sha256 as it is read; fsynced; renamed into
// ready/<dataset>/<first>_<last>.<ext>; and ready/ fsynced. Then, under the catalog's lock,
// the file gets the spool's next sequence numbers and a finalized record and an eligible
// record are appended, each fsynced. Only then is a moved source removed. A failure or a crash
// before the records leaves nothing recorded and the source where it was; a failure leaves
// nothing in ready/ either (a crash may leave an unrecorded file there, which Open removes).
//
// Moving a source that Add already linked into the spool before a crash (found by its inode
// in ready/<dataset>/) finishes that add instead of spooling the file twice.
//
// Errors: ErrNotSpool, ErrInput (nothing changed), store.ErrNotExist (no source),
// store.ErrForbidden (the spool, or the source's directory when moving, is not writable),
// ErrCorrupt, ErrIO. If the file was spooled but removing the source failed, Add returns the
// File and an error saying so.
func Add(ctx context.Context, dir, src string, opts AddOptions) (File, error) {
	const op = "add"
	if err := ctx.Err(); err != nil {
		return File{}, err
	}
	info, err := readInfo(op, absDir(dir))
	if err != nil {
		return File{}, err
	}
	fi, ext, err := checkAdd(op, src, &opts)
	if err != nil {
		return File{}, err
	}
	t := opts.Time
	if t.IsZero() {
		t = fi.ModTime()
	}
	clock := clockFor(opts.Clock)
	log := orDiscard(opts.Logger)
	if !opts.Copy {
		if id, ok := idOf(fi); ok && id.nlink > 1 {
			if f, done, err := finishMove(ctx, info, src, id, opts.Dataset, log); done || err != nil {
				return f, err
			}
		}
	}
	st, err := stage(ctx, info, src, fi, opts.Dataset, ext, opts.Copy)
	if err != nil {
		return File{}, err
	}
	defer st.discard()
	at("tmp-written")
	f, err := st.commit(ctx, info, opts.Dataset, ext, stamp{t, clock}, opts.Records, log)
	if err != nil || opts.Copy {
		return f, err
	}
	if err := os.Remove(src); err != nil {
		return f, ioErr(op, src, fmt.Errorf("spooled as %s, but removing the source failed: %w", f.Name, err))
	}
	_ = syncDir(filepath.Dir(src)) // best effort: the file is recorded; this only makes the removal durable
	at("source-removed")
	return f, nil
}

// AddAll spools each of srcs into the spool at dir, in order, as Add does, once every one of
// them has passed CheckAdd: a failure stops at that file, leaving the files before it spooled
// and it and those after as they were. added is called with each file spooled, before Add's
// error for it (a file spooled whose source could not be removed); an error of added stops
// the adds and is returned.
func AddAll(ctx context.Context, dir string, srcs []string, opts AddOptions, added func(f File, src string) error) error {
	for _, src := range srcs {
		if err := CheckAdd(src, opts); err != nil {
			return err
		}
	}
	for _, src := range srcs {
		f, err := Add(ctx, dir, src, opts)
		if f.ID != 0 {
			if aerr := added(f, src); aerr != nil {
				return aerr
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// CheckAdd checks, without changing anything, what Add checks before it starts: the options,
// that src is a regular file (a symbolic link only when copying), its extension, and, when
// moving, that its directory is writable. It returns the error Add would.
func CheckAdd(src string, opts AddOptions) error {
	_, _, err := checkAdd("add", src, &opts)
	return err
}

// checkAdd validates opts (setting its defaults) and src; it returns src's FileInfo (followed
// through a symbolic link only when copying) and the extension.
func checkAdd(op, src string, opts *AddOptions) (fs.FileInfo, string, error) {
	if err := checkDataset(op, opts.Dataset); err != nil {
		return nil, "", err
	}
	if err := parseClock(op, opts.Clock); err != nil {
		return nil, "", err
	}
	if opts.Records == 0 {
		opts.Records = 1
	}
	ext := opts.Ext
	if ext == "" {
		ext = ExtOf(src)
	}
	if err := checkExt(op, src, ext); err != nil {
		return nil, "", err
	}
	stat := os.Lstat
	if opts.Copy {
		stat = os.Stat
	}
	fi, err := stat(src)
	if err != nil {
		return nil, "", ioErr(op, src, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, "", newErr(op, src, ErrInput, errors.New("a symbolic link: add the file it points to, or copy it (--copy)"))
	case !fi.Mode().IsRegular():
		return nil, "", newErr(op, src, ErrInput, fmt.Errorf("not a regular file (%s)", fi.Mode().Type()))
	}
	if !opts.Copy {
		if err := writableDir(filepath.Dir(src)); err != nil {
			return nil, "", ioErr(op, filepath.Dir(absDir(src)), fmt.Errorf("%w: the source cannot be removed after it is spooled (add it as a copy, --copy, to keep it)", err))
		}
	}
	return fi, ext, nil
}

func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// staged is a file in tmp/ on its way to ready/: open, flocked (so that Open's clean-up of an
// owner knows it is in use), synced, its size and sha256 known.
type staged struct {
	path string   // in tmp/; "" once renamed into ready/
	f    *os.File // holds the flock until the add ends
	h    hash.Hash
	size int64
}

// newStaged creates an empty, locked file in tmp/.
func newStaged(op string, info Info, dataset, ext string) (*staged, error) {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	p := filepath.Join(info.Dir, TmpDir, fmt.Sprintf("%s-%d-%x.%s", dataset, os.Getpid(), rnd, ext))
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, tmpErr(op, filepath.Dir(p), err)
	}
	s := &staged{path: p, f: f, h: sha256.New()}
	if _, err := flock.TryLock(f, true); err != nil {
		s.discard()
		return nil, ioErr(op, p, err)
	}
	return s, nil
}

// stage puts src into tmp/: a hard link (moving, where possible) hashed in place, or a copy
// hashed as it is written. Either way the staged file is fsynced.
func stage(ctx context.Context, info Info, src string, fi fs.FileInfo, dataset, ext string, keep bool) (*staged, error) {
	const op = "add"
	if !keep {
		st, err := stageLink(ctx, info, src, dataset, ext)
		if err == nil || !linkUnsupported(err) {
			return st, err
		}
	}
	in, err := os.Open(src)
	if err != nil {
		return nil, ioErr(op, src, err)
	}
	defer in.Close()
	st, err := newStaged(op, info, dataset, ext)
	if err != nil {
		return nil, err
	}
	if err := st.fill(ctx, in, src); err != nil {
		st.discard()
		return nil, err
	}
	if err := unchanged(op, src, in, fi); err != nil {
		st.discard()
		return nil, err
	}
	return st, nil
}

// stageLink hard-links src into tmp/ and hashes it there. An error satisfying linkUnsupported
// means the link could not be made and nothing was done.
func stageLink(ctx context.Context, info Info, src, dataset, ext string) (*staged, error) {
	const op = "add"
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	p := filepath.Join(info.Dir, TmpDir, fmt.Sprintf("%s-%d-%x.%s", dataset, os.Getpid(), rnd, ext))
	if err := link(src, p); err != nil {
		if linkUnsupported(err) {
			return nil, err
		}
		return nil, tmpErr(op, filepath.Join(info.Dir, TmpDir), err)
	}
	f, err := os.Open(p)
	if err != nil {
		_ = os.Remove(p)
		return nil, ioErr(op, p, err)
	}
	st := &staged{path: p, f: f, h: sha256.New()}
	if _, err := flock.TryLock(f, true); err != nil {
		st.discard()
		return nil, ioErr(op, p, err)
	}
	fi, err := f.Stat()
	if err == nil {
		st.size, err = io.CopyBuffer(st.h, ctxReader{ctx, f}, make([]byte, copyBuf))
	}
	if err == nil && st.size != fi.Size() {
		err = newErr(op, src, ErrInput, errors.New("the file changed while it was added: add only finished files"))
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		st.discard()
		return nil, ioErr(op, src, err)
	}
	return st, nil
}

// tmpErr is a failure to create a file in tmp/; a permission error says whose it is.
func tmpErr(op, tmp string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		err = fmt.Errorf("%w: this user may not write to the spool", err)
	}
	return ioErr(op, tmp, err)
}

// fill copies r into the staged file, hashing it, and fsyncs it.
func (s *staged) fill(ctx context.Context, r io.Reader, src string) error {
	const op = "add"
	n, err := io.CopyBuffer(io.MultiWriter(s.f, s.h), ctxReader{ctx, r}, make([]byte, copyBuf))
	s.size += n
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == s.f.Name() {
			return ioErr(op, s.path, err)
		}
		return ioErr(op, src, err)
	}
	if err := s.f.Sync(); err != nil {
		return ioErr(op, s.path, err)
	}
	return nil
}

// unchanged checks that src still has the size and modification time it had before the copy.
func unchanged(op, src string, in *os.File, before fs.FileInfo) error {
	after, err := in.Stat()
	if err != nil {
		return ioErr(op, src, err)
	}
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		return newErr(op, src, ErrInput, errors.New("the file changed while it was added: add only finished files"))
	}
	return nil
}

// discard removes the staged file, unless it was renamed into ready/, and releases it.
func (s *staged) discard() {
	if s.path != "" {
		_ = os.Remove(s.path)
		s.path = ""
	}
	if s.f != nil {
		_ = s.f.Close() // releases the flock
		s.f = nil
	}
}

// stamp is a file's event time and the state of the clock that gave it.
type stamp struct {
	time  time.Time
	clock Clock
}

// commit moves the staged file into ready/ and records it, under the catalog lock: the next
// sequence numbers, the rename, a directory fsync, the finalized record and the eligible
// record. On failure nothing is recorded and nothing is left in ready/, unless the finalized
// record could be written but not taken back (then the error says so, and the owner makes the
// file eligible when it next reads the catalog).
func (s *staged) commit(ctx context.Context, info Info, dataset, ext string, ts stamp, records uint64, log *slog.Logger) (File, error) {
	const op = "add"
	catPath := filepath.Join(info.Dir, CatalogFile)
	cat, err := os.OpenFile(catPath, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return File{}, ioErr(op, catPath, err)
	}
	defer cat.Close()
	if err := flockCtx(ctx, cat, true); err != nil {
		return File{}, ioErr(op, catPath, err)
	}
	defer flock.Unlock(cat)
	tl, err := readTail(op, catPath, cat)
	if err != nil {
		return File{}, err
	}
	if tl.cut > 0 {
		log.Warn("spool: removed a torn last record from the catalog (an append was interrupted)",
			"path", catPath, "offset", tl.end, "bytes", tl.cut)
	}
	first := tl.next()
	last := first + records - 1
	if last < first {
		return File{}, newErr(op, "", ErrInput, fmt.Errorf("%d records from sequence %d overflow", records, first))
	}
	if err := ctx.Err(); err != nil {
		return File{}, err
	}
	name := readyName(dataset, first, last, ext)
	full := filepath.Join(info.Dir, filepath.FromSlash(name))
	if err := s.place(op, info, full); err != nil {
		return File{}, err
	}
	at("renamed")
	now := time.Now().UTC()
	rec := &record{Type: recFinalized, ID: first, Dataset: dataset, Path: name, Size: &s.size,
		SHA256: hex.EncodeToString(s.h.Sum(nil)), First: first, Last: last, Time: ts.time.UTC(), Ext: ext, Clock: ts.clock, At: now}
	end, err := appendRecord(cat, tl.end, rec)
	if err != nil {
		s.unplace(full)
		return File{}, ioErr(op, catPath, err)
	}
	at("finalized")
	end2, err := appendRecord(cat, end, &record{Type: recEligible, ID: first, At: now})
	if err != nil {
		if terr := truncSync(cat, tl.end); terr != nil {
			return File{}, ioErr(op, catPath, fmt.Errorf("%w; %s stays recorded as finalized, and the spool's owner makes it eligible", err, name))
		}
		s.unplace(full)
		return File{}, ioErr(op, catPath, err)
	}
	at("eligible")
	// Keep the catalog's reserve for the owner's records (see Spool.reserve); best effort: a
	// full file system only means the owner records in what is left of it.
	_ = reserveSpace(cat, end2, catalogReserve)
	return File{ID: first, Dataset: dataset, Path: full, Name: name, Size: s.size, SHA256: rec.SHA256,
		First: first, Last: last, Time: rec.Time, Ext: ext, Clock: ts.clock, State: Eligible, Added: now}, nil
}

// place renames the staged file to full in ready/ and fsyncs the directories it changed.
func (s *staged) place(op string, info Info, full string) error {
	dsDir := filepath.Dir(full)
	if err := os.Mkdir(dsDir, 0o755); err == nil {
		if err := syncDir(filepath.Join(info.Dir, ReadyDir)); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrExist) {
		return ioErr(op, dsDir, err)
	}
	if err := os.Rename(s.path, full); err != nil {
		if _, serr := os.Lstat(s.path); errors.Is(serr, fs.ErrNotExist) {
			return newErr(op, s.path, ErrIO, errors.New("the temporary file vanished (an owner starting at that moment may have taken it for a crash's leftover); nothing was recorded, add the file again"))
		}
		return ioErr(op, full, err)
	}
	s.path = ""
	if err := syncDir(dsDir); err != nil {
		s.unplace(full)
		return err
	}
	return nil
}

// unplace takes a file that is not recorded back out of ready/.
func (s *staged) unplace(full string) {
	_ = os.Remove(full)
	_ = syncDir(filepath.Dir(full))
}

func truncSync(f *os.File, size int64) error {
	if err := f.Truncate(size); err != nil {
		return err
	}
	return f.Sync()
}

// ctxReader stops a copy when its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}
