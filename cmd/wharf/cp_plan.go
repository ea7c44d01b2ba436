package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/transfer"
)

// side is one end of a copy: a local directory or an opened store, and the key or prefix in
// it that the command line named.
type side struct {
	raw   string
	local *transfer.Local // a plain local path
	st    *store.Store    // a store URL, opened at its root
	loc   store.Location  // the store's root location
	base  string          // the prefix (or, for one object, the key) inside it
	dir   string          // local: the directory Local serves
}

// url is how output names key of this side.
func (s *side) url(key string) string {
	if s.local != nil {
		return filepath.Join(s.dir, filepath.FromSlash(key))
	}
	l := s.loc
	l.Key = key
	return l.String()
}

func (s *side) close() {
	if s != nil && s.st != nil {
		s.st.Close()
	}
}

// cpPlan is what cp will do: the two sides and the tasks.
type cpPlan struct {
	src, dst *side
	tasks    []transfer.Task
	single   bool
	// passed counts what a recursive copy passes over: keys that cannot be a file or a key,
	// broken links, special files. Each was named on standard error as it was found.
	passed int
}

func (p *cpPlan) close() {
	p.src.close()
	p.dst.close()
}

// plan resolves SRC and DST and lists what to copy. Nothing is written.
func (a *app) plan(ctx context.Context, srcRaw, dstRaw string, o cpOptions) (*cpPlan, error) {
	if o.recursive {
		return a.planTree(ctx, srcRaw, dstRaw, o)
	}
	return a.planOne(ctx, srcRaw, dstRaw, o)
}

// planOne plans the copy of one object.
func (a *app) planOne(ctx context.Context, srcRaw, dstRaw string, o cpOptions) (*cpPlan, error) {
	src, err := a.parseSource(srcRaw)
	if err != nil {
		return nil, err
	}
	size := int64(-1)
	if src.kind == endLocal {
		fi, err := os.Stat(src.path)
		if err != nil {
			return nil, transfer.LocalError("stat", src.path, err)
		}
		if fi.IsDir() {
			return nil, usageErr(fmt.Errorf("cp: %s is a directory: use -r to copy what is in it", src.path))
		}
		if fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	dst, err := a.parseDest(dstRaw, src.name())
	if err != nil {
		return nil, err
	}
	p := &cpPlan{single: true}
	if p.src, err = a.openEnd(ctx, src, false); err != nil {
		return nil, err
	}
	if p.dst, err = a.openEnd(ctx, dst, !o.dryRun); err != nil {
		p.src.close()
		return nil, err
	}
	if p.src.st != nil {
		// The size up front: for the progress bar, and to download a large object in parts.
		info, err := p.src.st.Head(ctx, p.src.base)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("%s: %w", srcRaw, err)
		}
		size = info.Size
	}
	p.tasks = []transfer.Task{{Src: p.src.base, Dst: p.dst.base, Size: size}}
	return p, nil
}

// openEnd opens one end of a single-object copy: the local file's directory, or the store
// root with the key.
func (a *app) openEnd(ctx context.Context, e endpoint, write bool) (*side, error) {
	if e.kind == endLocal {
		abs, err := filepath.Abs(e.path)
		if err != nil {
			return nil, err
		}
		dir := filepath.Dir(abs)
		return &side{raw: e.raw, local: transfer.NewLocal(dir), dir: filepath.Dir(e.path), base: filepath.Base(abs)}, nil
	}
	s, err := a.openStore(ctx, e.raw, e.t.loc, write)
	if err != nil {
		return nil, err
	}
	return &side{raw: e.raw, st: s, loc: e.t.loc, base: e.t.key}, nil
}

// openStore opens the store at loc (a root). For a destination on the file store, the
// directory is made as needed, as it is for a local destination.
func (a *app) openStore(ctx context.Context, raw string, loc store.Location, write bool) (*store.Store, error) {
	s, err := a.open(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", raw, err)
	}
	if write && loc.Scheme == "file" {
		if err := s.MakeBucket(ctx); err != nil {
			s.Close()
			return nil, fmt.Errorf("%s: %w", raw, err)
		}
	}
	return s, nil
}

// planTree plans a recursive copy: every file or object under SRC to the same relative
// name under DST.
func (a *app) planTree(ctx context.Context, srcRaw, dstRaw string, o cpOptions) (*cpPlan, error) {
	p := &cpPlan{}
	var err error
	if p.src, err = a.openTree(ctx, srcRaw, false, false); err != nil {
		return nil, err
	}
	if p.dst, err = a.openTree(ctx, dstRaw, true, !o.dryRun); err != nil {
		p.src.close()
		return nil, err
	}
	if err = a.listTasks(ctx, p); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// openTree opens a directory or prefix. A local source must be a directory; a local or
// file:// destination must not be a file.
func (a *app) openTree(ctx context.Context, raw string, isDst, write bool) (*side, error) {
	if a.isLocalPath(raw) {
		abs, err := filepath.Abs(localPath(raw))
		if err != nil {
			return nil, err
		}
		if err := checkTreeDir(raw, abs, isDst); err != nil {
			return nil, err
		}
		return &side{raw: raw, local: transfer.NewLocal(abs), dir: filepath.Clean(localPath(raw))}, nil
	}
	loc, err := a.parseURL(raw)
	if err != nil {
		return nil, err
	}
	prefix := loc.Key
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if loc.Scheme == "file" {
		if err := checkTreeDir(raw, filepath.Join(loc.Bucket, filepath.FromSlash(prefix)), isDst); err != nil {
			return nil, err
		}
	}
	s, err := a.openStore(ctx, raw, loc.Root(), write)
	if err != nil {
		return nil, err
	}
	return &side{raw: raw, st: s, loc: loc.Root(), base: prefix}, nil
}

// checkTreeDir checks the directory of a recursive copy: a source must exist and be a
// directory; a destination may be missing, but not a file.
func checkTreeDir(raw, path string, isDst bool) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil && isDst && errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return transfer.LocalError("stat", path, err)
	case !fi.IsDir() && isDst:
		return usageErr(fmt.Errorf("cp -r: destination %s is a file, not a directory", raw))
	case !fi.IsDir():
		return usageErr(fmt.Errorf("cp -r: %s is a file: drop -r to copy one file", raw))
	}
	return nil
}

// listTasks lists the source and maps each key below it to the destination. What cannot be
// copied is passed over, each named on standard error with its code as it is found, and the
// rest is copied: a key that cannot be a local file name or a key of the destination, a
// non-empty object whose key ends in '/', a key that another key needs as a directory, a
// broken link or a special file. Only zero-byte directory markers are skipped silently.
func (a *app) listTasks(ctx context.Context, p *cpPlan) error {
	src, dst := p.src, p.dst
	pass := func(key string, err error) {
		p.passed++
		a.passOver(src.url(key), err)
	}
	for o, err := range a.walk(ctx, src) {
		switch {
		case err != nil && transfer.Passed(err):
			pass(o.Key, err)
			continue
		case err != nil:
			return fmt.Errorf("%s: %w", src.raw, err)
		}
		t, ok, err := taskOf(o, src, dst)
		if err != nil {
			pass(o.Key, err)
			continue
		}
		if ok {
			p.tasks = append(p.tasks, t)
		}
	}
	if dst.local != nil {
		var clashes []transfer.Task
		p.tasks, clashes = fileDirClashes(p.tasks, dst.base)
		for _, t := range clashes {
			err := &store.Error{Op: "path", Key: t.Dst, Kind: store.ErrKeyInvalid,
				Err: errors.New("another key needs this name as a directory, so it cannot also be a file")}
			pass(t.Src, err)
		}
	}
	switch {
	case len(p.tasks) == 0 && p.passed > 0:
		return incompleteErr(p.passed, 0, false)
	case len(p.tasks) == 0:
		return &store.Error{Op: "cp", Key: src.raw, Kind: store.ErrNotExist,
			Err: errors.New("nothing to copy: no file or object under it")}
	}
	return nil
}

// taskOf maps o, listed under src, to its copy to dst. It reports false for a directory
// marker (a zero-byte key ending in '/'), and an error for a key the copy must pass over.
func taskOf(o store.ObjectInfo, src, dst *side) (transfer.Task, bool, error) {
	rel := strings.TrimPrefix(o.Key, src.base)
	if rel == "" || strings.HasSuffix(rel, "/") {
		if o.Size == 0 {
			return transfer.Task{}, false, nil // a directory marker
		}
		return transfer.Task{}, false, &store.Error{Op: "get", Key: o.Key, Kind: store.ErrKeyInvalid,
			Err: fmt.Errorf("an object of %d bytes whose key ends in '/' cannot be copied: no file name or key of wharf's ends in '/'", o.Size)}
	}
	if src.st != nil {
		if err := store.ValidateKey("get", o.Key); err != nil {
			return transfer.Task{}, false, err
		}
	}
	switch {
	case dst.local != nil:
		if _, err := dst.local.Path(dst.base + rel); err != nil {
			return transfer.Task{}, false, err
		}
	case dst.st != nil:
		if err := store.ValidateKey("put", dst.base+rel); err != nil {
			return transfer.Task{}, false, err
		}
	}
	return transfer.Task{Src: o.Key, Dst: dst.base + rel, Size: o.Size}, true, nil
}

// fileDirClashes splits off the tasks whose destination another task needs as a directory
// (the keys "a" and "a/b" cannot both be local files): those are passed over, and what is
// below them is copied.
func fileDirClashes(tasks []transfer.Task, base string) (kept, clashes []transfer.Task) {
	files := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		files[t.Dst] = true
	}
	dirs := map[string]bool{}
	for _, t := range tasks {
		for i := len(base); i < len(t.Dst); i++ {
			if t.Dst[i] == '/' && files[t.Dst[:i]] {
				dirs[t.Dst[:i]] = true
			}
		}
	}
	if len(dirs) == 0 {
		return tasks, nil
	}
	kept = tasks[:0:0]
	for _, t := range tasks {
		if dirs[t.Dst] {
			clashes = append(clashes, t)
		} else {
			kept = append(kept, t)
		}
	}
	return kept, clashes
}

func (a *app) walk(ctx context.Context, s *side) func(func(store.ObjectInfo, error) bool) {
	if s.local != nil {
		return s.local.Walk(ctx, "")
	}
	return s.st.Walk(ctx, s.base)
}
