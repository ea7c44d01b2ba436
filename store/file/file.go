package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/wharfdata/wharf/internal/atomicfile"
	"github.com/wharfdata/wharf/store/driver"
)

func init() {
	driver.Register(driver.Backend{
		Scheme: "file",
		Path:   parsePath,
		Parse:  parseURL,
		Object: object,
		Local:  true,
		Noun:   "directory",
	}, func(_ context.Context, loc driver.Location, _ *Options, c *driver.Common) (*Store, error) {
		s, err := New(loc.Bucket)
		if err == nil && c != nil {
			s.createDir = c.CreateDir
		}
		return s, err
	})
}

// Options are the file store's options: it has none.
type Options struct{}

// Check accepts the empty options.
func (*Options) Check(driver.Location, *driver.Common) error { return nil }

// Hidden paths below the root, never listed and refused as keys.
const (
	metaDir  = ".wharf-meta"
	tmpDir   = metaDir + "/tmp"
	objDir   = metaDir + "/obj"
	lockFile = metaDir + "/lock"
)

// Store is a store rooted at a directory. It holds no open files between calls.
type Store struct {
	dir string
	// createDir makes the root at the first write and reads a missing one as empty
	// (driver.Common.CreateDir).
	createDir bool
	sweep     sync.Once // the stale temporary files, removed at the first write
}

// New returns the store rooted at dir, which must be absolute. The directory need not exist:
// operations report driver.ErrBucketMissing until MakeBucket creates it.
func New(dir string) (*Store, error) {
	if !filepath.IsAbs(dir) {
		return nil, &driver.Error{Op: "open", Key: dir, Kind: driver.ErrConfig,
			Err: errors.New("file store root must be an absolute directory")}
	}
	return &Store{dir: filepath.Clean(dir)}, nil
}

// VerifyByHash is true: an ETag is bound to a file's inode, modification time and size, which
// a file edited in place can keep, and a local file is read about as fast as it is hashed.
func (s *Store) VerifyByHash() bool { return true }

// LocalPath returns the path of key's file (driver.LocalFiler); "" is the root.
func (s *Store) LocalPath(key string) string {
	return filepath.Join(s.dir, filepath.FromSlash(key))
}

// Close does nothing: the store holds no resources between calls.
func (s *Store) Close() error { return nil }

// Describe names the store and the file system type of its root (of the nearest existing
// parent when the root does not exist yet).
func (s *Store) Describe() driver.Description {
	return driver.Description{
		Scheme:    "file",
		Location:  "file://" + filepath.ToSlash(s.dir),
		MountType: mountType(s.dir),
	}
}

// MakeBucket creates the root directory and its parents. An existing directory is success.
func (s *Store) MakeBucket(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := os.MkdirAll(s.dir, 0o777)
	if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EEXIST) {
		return &driver.Error{Op: "make-bucket", Key: s.dir, Kind: driver.ErrBucketMissing,
			Err: fmt.Errorf("%s (or a parent) is not a directory", s.dir)}
	}
	if err != nil {
		return mapErr("make-bucket", s.dir, err)
	}
	// The hidden directory marks the root as a store: a local path below it is read as a key
	// of this store by every command.
	if err := os.Mkdir(filepath.Join(s.dir, metaDir), 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return mapErr("make-bucket", s.dir, err)
	}
	if err := atomicfile.SyncDir(atomicfile.OS, s.dir); err != nil {
		return mapErr("make-bucket", s.dir, err)
	}
	return atomicfile.SyncDir(atomicfile.OS, filepath.Dir(s.dir))
}

// errNoRoot is what openRoot returns for a read of a missing root made on first write: the
// store is empty.
var errNoRoot = errors.New("the directory is not made yet")

// openRoot opens the root directory for one operation. With createDir, a write makes a
// missing root and a read of one fails with errNoRoot.
func (s *Store) openRoot(ctx context.Context, op, key string, write bool) (*os.Root, error) {
	r, err := os.OpenRoot(s.dir)
	if err != nil && s.createDir && errors.Is(err, fs.ErrNotExist) {
		if !write {
			return nil, errNoRoot
		}
		if err := s.MakeBucket(ctx); err != nil {
			return nil, err
		}
		r, err = os.OpenRoot(s.dir)
	}
	switch {
	case err == nil:
		return r, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, &driver.Error{Op: op, Key: key, Kind: driver.ErrBucketMissing,
			Err: fmt.Errorf("directory %s does not exist (make it with wharf mb %s)", s.dir, s.dir)}
	case errors.Is(err, fs.ErrPermission):
		return nil, mapErr(op, key, err)
	case errors.Is(err, syscall.ENOTDIR) || !isDir(s.dir):
		return nil, &driver.Error{Op: op, Key: key, Kind: driver.ErrBucketMissing,
			Err: fmt.Errorf("%s is not a directory", s.dir)}
	}
	return nil, mapErr(op, key, err)
}

// validKey is driver.ValidateKey, and refuses a key ending in '/': a file store keeps each
// object as a file, and no file name ends in '/'.
func validKey(op, key string) error {
	if err := driver.ValidateKey(op, key); err != nil {
		return err
	}
	if strings.HasSuffix(key, "/") {
		return invalidKey(op, key, "a file store keeps each object as a file, and no file name ends in '/'")
	}
	return nil
}

// checkKey refuses, beyond validKey, keys under the hidden directory and keys whose
// path runs through a symbolic link. (os.Root also keeps every access inside the root.)
func checkKey(r *os.Root, op, key string) error {
	if err := validKey(op, key); err != nil {
		return err
	}
	if hasMetaSegment(key) {
		return invalidKey(op, key, "%s is reserved for the file store's own files", metaDir)
	}
	for i := 0; i <= len(key); i++ {
		if i < len(key) && key[i] != '/' {
			continue
		}
		fi, err := r.Lstat(filepath.FromSlash(key[:i]))
		if err != nil {
			return nil // absent (or not a directory): nothing further to follow
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return invalidKey(op, key, "%s is a symbolic link: the file store does not follow links", key[:i])
		}
		if !fi.IsDir() {
			return nil
		}
	}
	return nil
}

// checkPrefix is checkKey for a listing prefix; it checks the directories the prefix names.
func checkPrefix(r *os.Root, prefix string) error {
	if err := driver.ValidatePrefix("list", prefix); err != nil {
		return err
	}
	if hasMetaSegment(strings.TrimSuffix(prefix, "/")) {
		return invalidKey("list", prefix, "%s is reserved for the file store's own files", metaDir)
	}
	if dir := path.Dir(prefix + "x"); dir != "." {
		if err := checkKey(r, "list", dir); err != nil {
			return err
		}
	}
	return nil
}

// hasMetaSegment reports whether a segment of key is the hidden directory: a store's own files
// are never data, at any depth, whichever root wrote them.
func hasMetaSegment(key string) bool {
	for seg := range strings.SplitSeq(key, "/") {
		if seg == metaDir {
			return true
		}
	}
	return false
}

func isDir(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

func parentOf(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i]
	}
	return "."
}

// RemoveBucket removes the store's directory when it holds no object: its metadata directory
// first, then every directory below it bottom up, each only while it is empty (os.Remove), so
// a file written meanwhile stops the removal there and is kept. A file anywhere below is
// ErrBucketNotEmpty; a missing directory ErrBucketMissing.
func (s *Store) RemoveBucket(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if fi, err := os.Stat(s.dir); err != nil || !fi.IsDir() {
		return &driver.Error{Op: "remove-bucket", Key: s.dir, Kind: driver.ErrBucketMissing, Err: fmt.Errorf("%s is not a directory", s.dir)}
	}
	meta := filepath.Join(s.dir, metaDir)
	var dirs []string
	var found string
	err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case path == meta:
			return filepath.SkipDir
		case d.IsDir():
			dirs = append(dirs, path)
		default:
			found = path
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil {
		return mapErr("remove-bucket", s.dir, err)
	}
	notEmpty := func(what string) error {
		return &driver.Error{Op: "remove-bucket", Key: s.dir, Kind: driver.ErrBucketNotEmpty, Err: fmt.Errorf("it holds %s", what)}
	}
	if found != "" {
		return notEmpty(found)
	}
	if err := os.RemoveAll(meta); err != nil {
		return mapErr("remove-bucket", s.dir, err)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err != nil {
			if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
				return notEmpty("a file written while it was removed, below " + dirs[i])
			}
			return mapErr("remove-bucket", dirs[i], err)
		}
	}
	return atomicfile.SyncDir(atomicfile.OS, filepath.Dir(s.dir))
}
