package transfer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// A Move is a copy that removes each source once its copy is in place: Plan.Move runs it.
type Move struct {
	// Removed hears each source as it is removed, named as output names it.
	Removed func(name string)
	// Kept hears each source that was copied but not removed, with the reason.
	Kept func(name string, err error)
}

// MoveSummary is what a move did: the copy's summary, and the sources removed and kept.
type MoveSummary struct {
	Summary
	Removed int
	Kept    int
}

// CheckMove refuses a move whose source and destination are the same object or overlap
// (one a prefix or directory inside the other): copying and then removing would destroy
// what it moved.
func (p *Plan) CheckMove() error {
	src, dst := p.src, p.dst
	switch {
	case p.stream:
		return usage("mv: standard input or output cannot be moved; use cp")
	case src.st != nil && dst.st != nil && sameStore(src.loc, dst.loc):
		if overlaps(src.base, dst.base, p.o.Recursive) {
			return usage("mv: %s and %s overlap: moving one onto the other would remove what was moved", src.raw, dst.raw)
		}
	case src.local != nil && dst.local != nil:
		a, b := realPath(src.path), realPath(dst.path)
		if overlaps(filepath.ToSlash(a)+"/", filepath.ToSlash(b)+"/", true) {
			return usage("mv: %s and %s overlap: moving one onto the other would remove what was moved", src.raw, dst.raw)
		}
	}
	return nil
}

// realPath is path made absolute with its symbolic links resolved, as far as it exists (a
// destination directory may not yet): so ./link and the directory it points at are one.
func realPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// overlaps reports whether two keys (tree: two prefixes) name any object in common.
func overlaps(a, b string, tree bool) bool {
	if !tree {
		return a == b
	}
	a, b = strings.TrimSuffix(a, "/")+"/", strings.TrimSuffix(b, "/")+"/"
	return a == "/" || b == "/" || strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

// Move copies what p lists, as Run does, and then removes the source of every copy: only
// once every copy succeeded (a failed move removes nothing, so a rerun finds every source),
// and each only while it is still the version that was copied (the ETag it was planned
// with, checked by a read and sent as the delete's If-Match; a local file of the size it was
// copied at). A source that changed or went is kept, given to m.Kept, and the move ends
// with ErrSourceKept.
func (p *Plan) Move(ctx context.Context, prog Progress, m Move) (MoveSummary, error) {
	if err := p.CheckMove(); err != nil {
		return MoveSummary{}, err
	}
	rec := &recorder{inner: prog}
	if prog == nil {
		rec.inner = nopProgress{}
	}
	sum, err := p.Run(ctx, rec)
	ms := MoveSummary{Summary: sum}
	if err != nil {
		return ms, err
	}
	for _, t := range rec.done {
		name, _ := p.Names(t)
		if p.o.Recursive {
			name = p.src.url(t.Src)
		} else if p.src.local != nil {
			name = p.src.raw
		}
		err := p.removeSource(ctx, t)
		switch {
		case store.IsContext(err):
			return ms, err
		case errors.Is(err, ErrSourceKept):
			ms.Kept++
			if m.Kept != nil {
				m.Kept(name, err)
			}
		case err != nil:
			return ms, fmt.Errorf("%s: %w", name, err)
		default:
			ms.Removed++
			if m.Removed != nil {
				m.Removed(name)
			}
		}
	}
	if ms.Kept > 0 {
		return ms, errcode.E("mv", "", ErrSourceKept,
			fmt.Errorf("%d of %d sources changed after they were copied and were kept (each named above)", ms.Kept, len(rec.done)))
	}
	return ms, nil
}

// removeSource removes t's source if it is still what was copied.
func (p *Plan) removeSource(ctx context.Context, t Task) error {
	if p.src.local != nil {
		path, err := p.src.local.Path(t.Src)
		if err != nil {
			return err
		}
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			return errcode.E("mv", path, ErrSourceKept, fmt.Errorf("gone after its copy: %w", err))
		case t.Size >= 0 && fi.Size() != t.Size:
			return errcode.E("mv", path, ErrSourceKept, fmt.Errorf("now %d bytes, copied at %d", fi.Size(), t.Size))
		}
		if err := os.Remove(path); err != nil {
			return LocalError("remove", path, err)
		}
		return nil
	}
	info, err := p.src.st.Head(ctx, t.Src)
	switch {
	case errors.Is(err, store.ErrNotExist):
		return errcode.E("mv", t.Src, ErrSourceKept, errors.New("gone after its copy"))
	case err != nil:
		return err
	case t.SrcETag != "" && info.ETag != t.SrcETag:
		return errcode.E("mv", t.Src, ErrSourceKept, fmt.Errorf("replaced after its copy (ETag %s, copied %s)", info.ETag, t.SrcETag))
	}
	err = p.src.st.Delete(ctx, t.Src, &store.DeleteOptions{IfMatch: info.ETag})
	if errors.Is(err, store.ErrPreconditionFailed) {
		return errcode.E("mv", t.Src, ErrSourceKept, errors.New("replaced after its copy (the delete's If-Match failed)"))
	}
	return err
}

// recorder passes progress on and keeps the tasks that were copied.
type recorder struct {
	inner Progress
	mu    sync.Mutex
	done  []Task
}

func (r *recorder) Bytes(n int64) { r.inner.Bytes(n) }

func (r *recorder) Done(t Task, info store.ObjectInfo, err error) {
	if err == nil {
		r.mu.Lock()
		r.done = append(r.done, t)
		r.mu.Unlock()
	}
	r.inner.Done(t, info, err)
}
