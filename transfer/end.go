package transfer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wharfdata/wharf/store"
)

// Stores is how a copy reads the URLs it is given and opens their stores: the caller's store
// configuration, given once. The copy knows nothing of where it came from (flags, a file).
type Stores struct {
	// Config parses URLs (named stores included) and opens stores; nil: the defaults. A
	// copy's destination is opened with a copy of it whose CreateDir is set.
	Config *store.Config
	// Open opens the store at loc, a root, with c; nil is store.OpenLocation.
	Open func(ctx context.Context, loc store.Location, c *store.Config) (*store.Store, error)
	// IsStore reports whether a local directory is the root of a file store (file.IsStore);
	// nil: none is. A local path inside none is read and written as plain files (Local).
	IsStore func(dir string) bool
}

// ParseObject parses a URL naming one object: its location's root is the store to open and
// its key the object's. A URL that names only a bucket, a prefix ending in '/' or a directory
// is ErrKeyInvalid.
func (s Stores) ParseObject(raw string) (store.Location, error) {
	loc, err := s.Config.ParseURL(raw)
	if err != nil {
		return store.Location{}, err
	}
	return s.object(raw, loc)
}

// object re-roots loc, parsed from raw, as the one object it must name.
func (s Stores) object(raw string, loc store.Location) (store.Location, error) {
	loc, ok := s.Config.ObjectLocation(loc)
	if !ok {
		what := "a bucket or a prefix"
		if _, local := loc.LocalPath(); local {
			what = "a directory"
		}
		return store.Location{}, &store.Error{Op: "parse-url", Key: raw, Kind: store.ErrKeyInvalid,
			Err: errors.New("the URL names " + what + ", not an object")}
	}
	return loc, nil
}

func (s Stores) open(ctx context.Context, raw string, loc store.Location, dst bool) (*store.Store, error) {
	c := s.Config
	if dst {
		cc := store.Config{}
		if c != nil {
			cc = *c
		}
		cc.CreateDir = true // like a local destination, a directory is made as needed
		c = &cc
	}
	open := s.Open
	if open == nil {
		open = store.OpenLocation
	}
	st, err := open(ctx, loc, c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", raw, err)
	}
	return st, nil
}

type endKind int

const (
	endLocal endKind = iota // plain local files
	endStdio                // standard input or output
	endStore                // a store
)

// An End is one end of a copy: standard input or output, a plain local file or directory, or
// a key or prefix in a store. It is parsed once from what the caller named, and opened by the
// plan.
type End struct {
	raw  string
	kind endKind
	path string         // endLocal: the file or directory as named (a file URL's spelling undone)
	loc  store.Location // endStore: the store's root (Key empty)
	// base is the key, or a tree's prefix, in the store; in the directory Local serves once
	// opened (the file's name, or "" for a tree).
	base string
	dir  string // endLocal, opened: the directory as output names it

	local *Local       // endLocal, opened
	st    *store.Store // endStore, opened
}

// parse parses raw once: "-", a plain local path (a path or a file URL inside no file
// store), or a store URL, whose key is left in loc.Key for the plan to read.
func (s Stores) parse(raw string) (*End, error) {
	if raw == "-" {
		return &End{raw: raw, kind: endStdio}, nil
	}
	loc, err := s.Config.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	if _, ok := loc.LocalPath(); ok && (s.IsStore == nil || !s.IsStore(loc.Bucket)) {
		return &End{raw: raw, kind: endLocal, path: localPath(raw)}, nil
	}
	return &End{raw: raw, kind: endStore, loc: loc}, nil
}

// localPath is the path of a local URL (file:///abs/x or a plain path).
func localPath(raw string) string {
	if rest, ok := strings.CutPrefix(raw, "file://"); ok {
		p := filepath.FromSlash(rest)
		if strings.HasSuffix(rest, "/") {
			p += string(filepath.Separator)
		}
		return p
	}
	return raw
}

// String names the end as a copy of one object reports it.
func (e *End) String() string {
	switch e.kind {
	case endLocal:
		return e.path
	case endStdio:
		return "-"
	}
	return e.url(e.base)
}

// url is how output names key of this end.
func (e *End) url(key string) string {
	if e.kind == endLocal {
		return filepath.Join(e.dir, filepath.FromSlash(key))
	}
	l := e.loc
	l.Key = key
	return l.String()
}

// name is the base name a directory destination takes from this source.
func (e *End) name() string {
	switch e.kind {
	case endLocal:
		return filepath.Base(e.path)
	case endStore:
		return baseName(e.base)
	}
	return ""
}

// asObject makes a parsed store end name the one object its URL names.
func (s Stores) asObject(e *End) error {
	if e.kind != endStore {
		return nil
	}
	loc, err := s.object(e.raw, e.loc)
	if err != nil {
		return err
	}
	e.loc, e.base = loc.Root(), loc.Key
	return nil
}

// asDest resolves the destination of one object: a directory (a trailing '/', or an existing
// local directory) takes the source's base name.
func (s Stores) asDest(e *End, name string) error {
	raw := e.raw
	dirLike := strings.HasSuffix(raw, "/") || strings.HasSuffix(raw, string(os.PathSeparator))
	needName := func() error {
		if name != "" {
			return nil
		}
		return usage("cp: %s names a directory or prefix: give the full destination name when copying from standard input", raw)
	}
	switch {
	case e.kind == endLocal && (dirLike || isDir(e.path)):
		if err := needName(); err != nil {
			return err
		}
		e.path = filepath.Join(e.path, name)
	case e.kind == endStore && (e.loc.Key == "" || strings.HasSuffix(e.loc.Key, "/")):
		if err := needName(); err != nil {
			return err
		}
		e.loc, e.base = e.loc.Root(), e.loc.Key+name
	case e.kind == endStore:
		return s.asObject(e)
	}
	return nil
}

// openOne opens one end of a copy of one object: the local file's directory, or the store.
func (s Stores) openOne(ctx context.Context, e *End, dst bool) error {
	if e.kind == endLocal {
		abs, err := filepath.Abs(e.path)
		if err != nil {
			return err
		}
		e.local, e.dir, e.base = NewLocal(filepath.Dir(abs)), filepath.Dir(e.path), filepath.Base(abs)
		return nil
	}
	st, err := s.open(ctx, e.raw, e.loc, dst)
	e.st = st
	return err
}

// openTree opens a directory or prefix. A local source must be a directory; a local or file
// store destination must not be a file.
func (s Stores) openTree(ctx context.Context, e *End, dst bool) error {
	if e.kind == endLocal {
		abs, err := filepath.Abs(e.path)
		if err != nil {
			return err
		}
		if err := checkTreeDir(e.raw, abs, dst); err != nil {
			return err
		}
		// A root given as a symbolic link to a directory is that directory (links below it
		// are still not followed): a walk from the link itself would find nothing.
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		e.local, e.dir = NewLocal(abs), filepath.Clean(e.path)
		return nil
	}
	prefix := e.loc.Key
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	e.loc.Key = prefix
	if p, ok := e.loc.LocalPath(); ok {
		if err := checkTreeDir(e.raw, p, dst); err != nil {
			return err
		}
	}
	e.loc, e.base = e.loc.Root(), prefix
	st, err := s.open(ctx, e.raw, e.loc, dst)
	e.st = st
	return err
}

// checkTreeDir checks the directory of a recursive copy: a source must exist and be a
// directory; a destination may be missing, but not a file.
func checkTreeDir(raw, path string, dst bool) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil && dst && errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return LocalError("stat", path, err)
	case !fi.IsDir() && dst:
		return usage("cp -r: destination %s is a file, not a directory", raw)
	case !fi.IsDir():
		return usage("cp -r: %s is a file: drop -r to copy one file", raw)
	}
	return nil
}

func (e *End) close() {
	if e != nil && e.st != nil {
		e.st.Close()
	}
}

func (e *End) source() Source {
	if e.local != nil {
		return e.local
	}
	return e.st
}

func (e *End) dest() Dest {
	if e.local != nil {
		return e.local
	}
	return e.st
}

// baseName is the last segment of a key or path, ignoring a trailing '/'.
func baseName(keyOrPath string) string {
	s := strings.TrimRight(filepath.ToSlash(keyOrPath), "/")
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// UsageError is a copy asked for in a way it cannot be made (a directory without Recursive,
// standard input into a prefix): nothing was attempted. A command line reports it as its own
// usage error.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usage(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}
