package file

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wharfdata/wharf/store/driver"
)

// List returns one page of the keys under opts.Prefix, sorted as strings (as S3 sorts them),
// walking only the directories that can hold keys after opts.Token. Page.Next is the last key
// or common prefix returned, set only when more follow. Symbolic links, special files, names
// that are not valid keys and the hidden .wharf-meta directory are never listed.
func (s *Store) List(ctx context.Context, opts *driver.ListOptions) (driver.Page, error) {
	r, err := s.openRoot(ctx, "list", opts.Prefix, false)
	if err == errNoRoot {
		return driver.Page{}, nil // an empty store
	}
	if err != nil {
		return driver.Page{}, err
	}
	defer r.Close()
	if err := checkPrefix(r, opts.Prefix); err != nil {
		return driver.Page{}, err
	}
	release, err := lock(ctx, r, "list", opts.Prefix, false)
	if err != nil {
		return driver.Page{}, err
	}
	defer release()
	w := &walker{ctx: ctx, r: r, prefix: opts.Prefix, delim: opts.Delimiter != "", p: driver.NewPager(opts)}
	dir := opts.Prefix[:strings.LastIndexByte(opts.Prefix, '/')+1]
	if _, err := w.walk(dir); err != nil {
		return driver.Page{}, err
	}
	return w.p.Page(), nil
}

type walker struct {
	ctx    context.Context
	r      *os.Root
	prefix string
	delim  bool
	p      *driver.Pager
}

// entry is a directory entry named by the key (or, for a directory, the key prefix ending in
// '/') that it stands for.
type entry struct {
	key   string
	isDir bool
}

// walk offers the entries below dir ("" for the root, else ending in '/') to the pager in key
// order; more is false once the page is full.
func (w *walker) walk(dir string) (more bool, err error) {
	if err := w.ctx.Err(); err != nil {
		return false, err
	}
	entries, err := w.readDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		switch {
		case !e.isDir:
			if more, err = w.object(e.key); !more || err != nil {
				return more, err
			}
		case w.delim && strings.HasPrefix(e.key, w.prefix):
			if w.p.Skip(e.key) || !w.hasObjects(e.key) {
				continue
			}
			if !w.p.AddPrefix(e.key) {
				return false, nil
			}
		case w.p.Before(e.key):
			// Every key below was returned on an earlier page.
		default:
			if more, err = w.walk(e.key); !more || err != nil {
				return more, err
			}
		}
	}
	return true, nil
}

// object offers the file at key to the pager.
func (w *walker) object(key string) (bool, error) {
	if !strings.HasPrefix(key, w.prefix) || w.p.Skip(key) {
		return true, nil
	}
	fi, err := w.r.Lstat(filepath.FromSlash(key))
	if err != nil {
		if isNotExist(err) {
			return true, nil // removed by hand since it was read
		}
		return false, mapErr("list", w.prefix, err)
	}
	return w.p.AddObject(infoOf(w.r, key, fi, false)), nil
}

// readDir returns the listable entries of dir that can hold keys under the prefix, sorted by
// key. A missing directory has none.
func (w *walker) readDir(dir string) ([]entry, error) {
	name := "."
	if dir != "" {
		name = filepath.FromSlash(strings.TrimSuffix(dir, "/"))
	}
	f, err := w.r.Open(name)
	if err != nil {
		if isNotExist(err) {
			return nil, nil
		}
		return nil, mapErr("list", w.prefix, err)
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		if isNotExist(err) {
			return nil, nil // a file where the prefix wants a directory
		}
		return nil, mapErr("list", w.prefix, err)
	}
	var out []entry
	for _, de := range des {
		if e, ok := w.entryOf(dir, de); ok {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	return out, nil
}

func (w *walker) entryOf(dir string, de fs.DirEntry) (entry, bool) {
	if de.Name() == metaDir {
		return entry{}, false
	}
	e := entry{key: dir + de.Name(), isDir: de.IsDir()}
	if !de.IsDir() && !de.Type().IsRegular() {
		return entry{}, false
	}
	if driver.ValidateKey("list", e.key) != nil {
		return entry{}, false
	}
	if e.isDir {
		e.key += "/"
	}
	if !strings.HasPrefix(e.key, w.prefix) && !(e.isDir && strings.HasPrefix(w.prefix, e.key)) {
		return entry{}, false
	}
	return e, true
}

// hasObjects reports whether any listable file lies below dir, so that an empty directory is
// not reported as a common prefix.
func (w *walker) hasObjects(dir string) bool {
	entries, err := w.readDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.isDir || w.hasObjects(e.key) {
			return true
		}
	}
	return false
}
