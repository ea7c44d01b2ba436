package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wharfdata/wharf/internal/atomicfile"
	"github.com/wharfdata/wharf/store"
)

// Local is a directory on the local disk, read and written as plain files. Keys are paths
// relative to it with '/' separators; a key that would leave the directory is
// store.ErrKeyInvalid.
//
// A Put writes a temporary file beside its destination and renames it into place only once
// every byte is written and the size checked: an interrupted or failed write removes the
// temporary file and never leaves a partial file at the key. Missing directories are made.
type Local struct {
	root string
	// Durability is how much of each file is on the disk when Put returns (DurableEach, the
	// zero value, unless set).
	Durability Durability

	mu      sync.Mutex
	dirs    map[string]bool // directories known to exist
	created atomic.Uint64   // temporary files created, numbering them in order
}

// Durability is how much of a file written to Local is on the disk, not just in the page
// cache, by the time the copy reports it done. Whatever the mode, a file appears under its
// final name only complete: a crash of the process never leaves a partial file there. The
// modes differ in what a power loss or kernel crash shortly afterwards can do.
type Durability int

const (
	// DurableEach fsyncs every file before renaming it into place, and Sync fsyncs the
	// directories: once Sync returns, every file survives a power loss.
	DurableEach Durability = iota
	// DurableAtEnd skips the fsync of each file; Sync flushes the whole file system once
	// (syncfs(2)) and the directories. Same guarantee once Sync returns; before that, a power
	// loss may leave an empty or short file under a final name.
	DurableAtEnd
	// DurableNone leaves the bytes to the kernel's own writeback, as most copy tools do:
	// nothing is fsynced, and Sync does nothing. A power loss or kernel crash within the
	// kernel's writeback delay (some 30 s on Linux) may leave empty or short files under
	// final names.
	DurableNone
)

// NewLocal returns the directory root (which need not exist yet) as a Local.
func NewLocal(root string) *Local { return &Local{root: root, dirs: map[string]bool{}} }

// Path is the file a key names. A key names a file only when it is a plain relative path:
// segments separated by '/', none of them empty, "." or "..", and no NUL byte; so two keys
// never name one file, and no key names one outside the root. Every other byte is kept: a
// backslash or a tab is a legal file-name byte on Linux (not on Windows, where a backslash
// separates names and is refused). Anything else is store.ErrKeyInvalid naming the key.
func (l *Local) Path(key string) (string, error) {
	if why := fileNameProblem(key); why != "" {
		return "", &store.Error{Op: "path", Key: key, Kind: store.ErrKeyInvalid,
			Err: fmt.Errorf("cannot be the name of a file under %s: %s", l.root, why)}
	}
	return filepath.Join(l.root, filepath.FromSlash(key)), nil
}

// fileNameProblem says why key cannot name a file below a directory, or "".
func fileNameProblem(key string) string {
	switch {
	case key == "":
		return "the key is empty"
	case strings.HasPrefix(key, "/"):
		return "the key starts with '/'"
	case strings.HasSuffix(key, "/"):
		return "the key ends with '/'"
	case strings.IndexByte(key, 0) >= 0:
		return "the key holds a NUL byte"
	case filepath.Separator != '/' && strings.ContainsRune(key, filepath.Separator):
		return fmt.Sprintf("the key holds %q, this system's path separator", filepath.Separator)
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return "the key has an empty segment ('//')"
		case ".", "..":
			return fmt.Sprintf("the key has a %q segment", seg)
		}
	}
	if !filepath.IsLocal(filepath.FromSlash(key)) {
		return "not a local name on this system" // a reserved name on Windows
	}
	return ""
}

// DefaultContentType is the content type of local bytes whose name says none: standard input,
// or a file whose extension the mime package does not know. It is the registered type of
// arbitrary bytes (RFC 2046); left unnamed, servers pick their own (MinIO records
// application/octet-stream for a single PutObject and binary/octet-stream for a multipart
// upload).
const DefaultContentType = "application/octet-stream"

// ContentTypeOf is the content type of the local file name: from its extension
// (mime.TypeByExtension), else DefaultContentType.
func ContentTypeOf(name string) string {
	if t := mime.TypeByExtension(filepath.Ext(name)); t != "" {
		return t
	}
	return DefaultContentType
}

// Get opens the file at key. Its Info has the size (-1 for a named pipe or a device, read to
// its end) and its content type (ContentTypeOf).
func (l *Local) Get(ctx context.Context, key string, opts *store.GetOptions) (*store.Object, error) {
	path, err := l.Path(key)
	if err != nil {
		return nil, err
	}
	f, fi, err := openFile(path)
	if errors.Is(err, errIsDir) {
		return nil, &store.Error{Op: "open", Key: path, Kind: store.ErrNotExist, Err: err}
	}
	if err != nil {
		return nil, err
	}
	info := store.ObjectInfo{Key: key, Size: fi.Size(), LastModified: fi.ModTime(), ContentType: ContentTypeOf(path)}
	var rc io.ReadCloser = f
	if !fi.Mode().IsRegular() {
		info.Size = -1 // a pipe or a device: read to its end
		rc = interruptible(ctx, f)
	}
	if opts != nil && (opts.Offset > 0 || opts.Length > 0) {
		rc = rangeFile(f, opts.Offset, opts.Length, fi.Size())
	}
	return &store.Object{Info: info, ReadCloser: rc}, nil
}

// errIsDir is openFile's error for a directory.
var errIsDir = errors.New("is a directory")

// openFile opens the file at path to read and stats it; a directory is errIsDir.
func openFile(path string) (*os.File, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, LocalError("open", path, err)
	}
	fi, err := f.Stat()
	if err == nil && fi.IsDir() {
		err = errIsDir
	} else if err != nil {
		err = LocalError("stat", path, err)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// interruptible makes a blocked Read of a pipe return once ctx ends (a pipe's reads go
// through the poller, so a deadline wakes them).
func interruptible(ctx context.Context, f *os.File) io.ReadCloser {
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })
	return &pipeFile{File: f, stop: stop}
}

type pipeFile struct {
	*os.File
	stop func() bool
}

func (p *pipeFile) Close() error {
	p.stop()
	return p.File.Close()
}

func rangeFile(f *os.File, off, n, size int64) io.ReadCloser {
	if n <= 0 {
		n = size - off
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, off, n), f}
}

// Walk yields every regular file below prefix (a directory relative to the root, "" for the
// root itself) in lexical order, as keys relative to the root. Symbolic links to files are
// followed; links to directories are not (they are not walked, and not reported). A missing
// root or prefix is store.ErrNotExist naming it.
//
// What the walk passes over is yielded as an error with the file's key in the ObjectInfo,
// after which the walk goes on if yield returns true (Passed reports such errors): a
// symbolic link that does not resolve, its target missing or in a loop (ErrLinkBroken), and
// a named pipe, socket or device (ErrSpecialFile). Any other error ends the walk.
func (l *Local) Walk(ctx context.Context, prefix string) iter.Seq2[store.ObjectInfo, error] {
	return func(yield func(store.ObjectInfo, error) bool) {
		top := filepath.Join(l.root, filepath.FromSlash(prefix))
		if _, err := os.Stat(top); err != nil {
			yield(store.ObjectInfo{}, LocalError("stat", top, err))
			return
		}
		stopped := false
		err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return LocalError("read", path, err)
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			info, ok, err := l.fileInfo(path, d)
			switch {
			case err != nil && Passed(err):
			case err != nil:
				return err
			case !ok:
				return nil
			}
			if !yield(info, err) {
				stopped = true
				return filepath.SkipAll
			}
			return nil
		})
		if err != nil && !stopped {
			yield(store.ObjectInfo{}, err)
		}
	}
}

// fileInfo describes path when it is a regular file (or a link to one). A broken link or a
// special file is an error that Passed reports, with the info naming its key.
func (l *Local) fileInfo(path string, d fs.DirEntry) (store.ObjectInfo, bool, error) {
	if d.IsDir() || strings.Contains(d.Name(), atomicfile.TempMarker) {
		return store.ObjectInfo{}, false, nil
	}
	rel, err := filepath.Rel(l.root, path)
	if err != nil {
		return store.ObjectInfo{}, false, err
	}
	info := store.ObjectInfo{Key: filepath.ToSlash(rel)}
	fi, err := os.Stat(path) // follows a link
	if err != nil {
		return info, false, LocalError("stat", path, err)
	}
	switch {
	case fi.IsDir():
		return store.ObjectInfo{}, false, nil // a link to a directory: not followed
	case !fi.Mode().IsRegular():
		return info, false, &store.Error{Op: "walk", Key: path, Kind: ErrSpecialFile,
			Err: fmt.Errorf("a %s: not read by a recursive copy", fileKind(fi.Mode()))}
	}
	info.Size, info.LastModified, info.ETag = fi.Size(), fi.ModTime(), LocalETag(fi)
	return info, true, nil
}

// fileKind names the kind of a file that is not a regular file or a directory.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// Put writes body to the file at key through a temporary file: see Local. With
// opts.IfNoneMatch an existing file is store.ErrPreconditionFailed and is never replaced (the
// file is hard-linked into place, which fails on an existing name even if another process made
// it meanwhile). With opts.Size ≥ 0, a body of another length fails and writes nothing.
func (l *Local) Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error) {
	p, n, err := l.write(ctx, key, body, opts, nil)
	if err != nil {
		return store.ObjectInfo{}, err
	}
	if err := p.commit(); err != nil {
		return store.ObjectInfo{}, err
	}
	return store.ObjectInfo{Key: key, Size: n}, nil
}

// write copies body into a temporary file beside key's file and checks its size; the caller
// commits or aborts what it returns. With sum, the bytes go to the file through it (sum.w is
// set here), so that sum.crc is the CRC-32C of what was written.
func (l *Local) write(ctx context.Context, key string, body io.Reader, opts *store.PutOptions, sum *sumWriter) (*pending, int64, error) {
	if opts == nil {
		opts = &store.PutOptions{Size: -1}
	}
	path, err := l.Path(key)
	if err != nil {
		return nil, 0, err
	}
	p, err := l.create(path, condOf(opts), opts.Size)
	if err != nil {
		return nil, 0, err
	}
	w := l.writer(p.f, p.f.File, 0)
	if sum != nil {
		sum.w, w = w, sum
	}
	n, err := copyCtx(ctx, w, body)
	if err != nil {
		p.abort()
		return nil, n, writeErr(ctx, path, err)
	}
	p.size = n
	if opts.Size >= 0 && !(opts.Size == 0 && n > 0) && n != opts.Size {
		p.abort()
		return nil, n, &store.Error{Op: "write", Key: path, Kind: store.ErrUnavailable,
			Err: fmt.Errorf("%w (announced %d bytes, read %d)", errSize, opts.Size, n)}
	}
	return p, n, nil
}

// preallocMin is the size from which a file's disk space is reserved before it is written
// (preallocate): below it, the extra system call costs more than it saves.
const preallocMin = 1 << 20

// cond is the condition of a write to a local file: none, create only (ifAbsent), or replace
// only the file whose LocalETag is ifMatch.
type cond struct {
	ifAbsent bool
	ifMatch  string
}

func condOf(opts *store.PutOptions) cond {
	return cond{ifAbsent: opts.IfNoneMatch, ifMatch: opts.IfMatch}
}

// check refuses the write to path when the file there does not meet c. An ifMatch is checked
// when the write starts and again just before its rename: a writer that changes the file in
// between is refused, one that changes it during the rename itself is not seen (a local file
// system has no conditional rename).
func (c cond) check(path string) error {
	switch {
	case c.ifAbsent:
		if _, err := os.Lstat(path); err == nil {
			return existsErr(path)
		}
	case c.ifMatch != "":
		fi, err := os.Stat(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return LocalError("stat", path, err)
		}
		if err != nil || LocalETag(fi) != c.ifMatch {
			return changedErr(path, err)
		}
	}
	return nil
}

// LocalETag is what stands for a local file's ETag, as Local.Walk reports it: its
// modification time and size. A write with IfMatch replaces the file only while it is
// unchanged by that measure.
func LocalETag(fi fs.FileInfo) string {
	return fmt.Sprintf("%x-%x", fi.ModTime().UnixNano(), fi.Size())
}

// create makes the directory of path and a temporary file beside it (atomicfile), with size
// bytes of disk reserved when the size is known and large enough to gain from it.
func (l *Local) create(path string, c cond, size int64) (*pending, error) {
	if err := l.mkdir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if err := c.check(path); err != nil {
		return nil, err
	}
	f, err := atomicfile.Create(path)
	if err == nil && size >= preallocMin {
		if err = preallocate(f.File, size); err != nil {
			f.Abort()
		}
	}
	if err != nil {
		return nil, writeErr(context.Background(), path, &atomicfile.WriteError{Path: path, Err: err})
	}
	return &pending{l: l, f: f, path: path, cond: c, seq: l.created.Add(1)}, nil
}

func (l *Local) mkdir(dir string) error {
	l.mu.Lock()
	known := l.dirs[dir]
	l.mu.Unlock()
	if known {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && errors.Is(err, syscallENOTDIR) {
			return &store.Error{Op: "mkdir", Key: dir, Kind: store.ErrConfig, Err: fmt.Errorf("%s is a file, not a directory", pe.Path)}
		}
		return LocalError("mkdir", dir, err)
	}
	l.mu.Lock()
	l.dirs[dir] = true
	l.mu.Unlock()
	return nil
}

// commit syncs the temporary file, unless synced says a syncfs(2) already covered it, and
// moves it to path (atomicfile: a rename, or for create-if-absent a link that never replaces).
func (l *Local) commit(f *atomicfile.File, path string, c cond, synced bool) error {
	if !synced && (l.Durability == DurableEach || l.Durability == DurableAtEnd && !haveSyncFS) {
		if err := f.Sync(); err != nil {
			return LocalError("sync", path, err)
		}
	}
	if c.ifMatch != "" {
		if err := c.check(path); err != nil {
			return err
		}
	}
	if err := f.Place(c.ifAbsent); err != nil {
		if c.ifAbsent && errors.Is(err, fs.ErrExist) {
			return existsErr(path)
		}
		return LocalError("place", path, err)
	}
	return nil
}

// Sync makes what Put wrote durable: with DurableAtEnd, one syncfs(2) of the file system
// (every file at once, far cheaper than one fsync each); then an fsync of each directory
// written into, so that the renames survive a crash. With DurableNone it does nothing.
func (l *Local) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.Durability == DurableNone {
		return nil
	}
	var err error
	for dir := range l.dirs {
		if l.Durability == DurableAtEnd && err == nil {
			err = syncFSOf(dir)
			l.Durability = DurableEach // once is enough: it flushes the whole file system
			if err != nil {
				err = LocalError("sync", l.root, err)
			}
		}
		if serr := atomicfile.SyncDir(atomicfile.OS, dir); serr != nil && err == nil && !errors.Is(serr, fs.ErrNotExist) {
			err = LocalError("sync", dir, serr)
		}
	}
	return err
}

func existsErr(path string) error {
	return &store.Error{Op: "put", Key: path, Kind: store.ErrPreconditionFailed,
		Err: errors.New("the file exists, and the write was a create that never replaces one")}
}

// changedErr is the refusal of a replace (or a removal) of the file at path that is no longer
// the one it was planned against: another writer changed or removed it (err, when gone).
func changedErr(path string, err error) error {
	what := "the file changed after it was compared (its modification time or size differ)"
	if err != nil {
		what = "the file was removed after it was compared"
	}
	return &store.Error{Op: "put", Key: path, Kind: store.ErrPreconditionFailed, Err: errors.New(what)}
}

// Delete removes the file at key while its LocalETag is etag (any file when etag is ""): a
// file another writer changed or removed since it was listed is store.ErrPreconditionFailed.
func (l *Local) Delete(ctx context.Context, key, etag string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	path, err := l.Path(key)
	if err != nil {
		return err
	}
	if etag != "" {
		if err := (cond{ifMatch: etag}).check(path); err != nil {
			var se *store.Error
			if errors.As(err, &se) {
				se.Op = "delete"
			}
			return err
		}
	}
	if err := os.Remove(path); err != nil {
		return LocalError("remove", path, err)
	}
	return nil
}

// syncFSOf flushes the file system holding dir (syncfs(2) where there is one).
func syncFSOf(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return syncFS(d)
}
