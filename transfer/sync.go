package transfer

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// SyncOptions say what PlanSync plans beyond a recursive copy.
type SyncOptions struct {
	// CopyOptions are the copy's (Recursive is implied; IfAbsent has no meaning, since every
	// write of a sync is conditional by itself).
	CopyOptions
	// Delete removes what is only in the destination, once every copy succeeded, unless a
	// guard holds (SyncPlan.DeleteRefused).
	Delete bool
	// MaxDelete bounds the removals: with more to remove, none is removed. Below zero: no
	// bound. The zero value allows none, so that a caller who sets Delete also says how many.
	MaxDelete int
	// AllowEmptySource syncs a source with nothing under it (with Delete, emptying the
	// destination) instead of refusing it with ErrEmptySource.
	AllowEmptySource bool
}

// A SyncPlan is what a sync will do: the copies (the embedded Plan's Tasks, each a create of
// a key the destination lacks or a replace of the version it holds) and the removals.
type SyncPlan struct {
	*Plan
	// Removals are the destination's objects or files that are only there, each with the
	// ETag (a local file's LocalETag) it was listed with: removed only with Delete, and only
	// while still that version. Directory markers are never among them.
	Removals []Removal
	// Unchanged counts the sources the destination already holds: the same size, and the
	// same content MD5 between S3 stores, else a destination no older than its source.
	// Replaces counts the Tasks that replace a version the destination holds.
	Unchanged, Replaces int
	// OnlyInDest counts the destination's objects or files that are only there, whether or
	// not they are to be removed.
	OnlyInDest int
	// DeleteRefused says why no removal will be made although Delete was asked (an
	// ErrDeleteRefused); nil when the removals will be made, or none was asked.
	DeleteRefused error

	delete bool
}

// RemovalName is how output names r.
func (sp *SyncPlan) RemovalName(r Removal) string { return sp.dst.url(r.Key) }

// A Removal is one object or file a sync removes from its destination.
type Removal struct {
	Key  string `json:"key"`
	Size int64  `json:"size"`
	ETag string `json:"-"`
}

// SyncReport hears what a sync's Run does besides copying.
type SyncReport struct {
	Removed  func(name string)            // a removal made, named as output names it
	Conflict func(name string, err error) // a write or removal refused: another writer changed it
}

// SyncSummary is what a sync did.
type SyncSummary struct {
	Summary       // the copies
	Unchanged int `json:"unchanged"`
	Removed   int `json:"removed"`
	Conflicts int `json:"conflicts,omitempty"`
}

// PlanSync lists src and dst, each a local directory or a store prefix, at once, and plans
// what makes dst hold what src holds: a copy of each source the destination lacks (a create
// that never replaces) or holds another version of (a replace of exactly the version
// listed), and with Delete the removal of what is only in dst. Nothing is written. Source and
// destination must not overlap; an empty source is ErrEmptySource unless AllowEmptySource.
func PlanSync(ctx context.Context, stores Stores, srcRaw, dstRaw string, o SyncOptions) (*SyncPlan, error) {
	switch {
	case srcRaw == "-" || dstRaw == "-" || dstRaw == "stdout://":
		return nil, usage("sync: standard input or output holds one stream, not a tree: use cp")
	case o.IfAbsent:
		return nil, usage("sync: every write of a sync is conditional already: if-absent has no meaning")
	}
	o.Recursive = true
	if o.ReadPartSize <= 0 {
		o.ReadPartSize = defaultReadPartSize
	}
	src, dst, err := stores.parseEnds(srcRaw, dstRaw, o.CopyOptions)
	if err != nil {
		return nil, err
	}
	sp := &SyncPlan{Plan: &Plan{src: src, dst: dst, o: o.CopyOptions, stores: stores, treeWalk: true}, delete: o.Delete}
	if sp.match, err = wildcard(src); err != nil {
		return nil, err
	}
	if err := sp.plan(ctx, o); err != nil {
		sp.Close()
		return nil, err
	}
	if o.NoFsync && dst.local != nil {
		dst.local.Durability = DurableNone
	}
	return sp, nil
}

func (sp *SyncPlan) plan(ctx context.Context, o SyncOptions) error {
	p := sp.Plan
	if err := p.stores.openTree(ctx, p.src, false); err != nil {
		return err
	}
	if err := p.stores.openTree(ctx, p.dst, true); err != nil {
		return err
	}
	if err := p.checkOverlap("sync"); err != nil {
		return err
	}
	// Both listings at once: on a large tree each is most of the time an unchanged sync takes.
	var dstErr error
	var held map[string]store.ObjectInfo
	var wg sync.WaitGroup
	wg.Go(func() { held, dstErr = listDest(ctx, p.dst, p.takes) })
	srcErr := p.collect(ctx)
	wg.Wait()
	switch {
	case srcErr != nil:
		return srcErr
	case dstErr != nil:
		return fmt.Errorf("%s: %w", p.dst.raw, dstErr)
	case len(p.Tasks) == 0 && p.Passed == 0 && !o.AllowEmptySource:
		return errcode.E("sync", p.src.raw, ErrEmptySource, errors.New("no file or object under it: nothing is copied or removed"))
	}
	md5s := p.src.st != nil && p.dst.st != nil && p.src.st.ETagsAreMD5() && p.dst.st.ETagsAreMD5()
	copies := p.Tasks[:0]
	for _, t := range p.Tasks {
		d, ok := held[t.Dst]
		delete(held, t.Dst)
		switch {
		case !ok:
			t.IfAbsent = true
		case unchanged(t, d, md5s):
			sp.Unchanged++
			continue
		default:
			t.IfMatch = d.ETag
			sp.Replaces++
		}
		copies = append(copies, t)
	}
	p.Tasks = copies
	sp.OnlyInDest = len(held)
	if !o.Delete {
		return nil
	}
	for key, d := range held {
		sp.Removals = append(sp.Removals, Removal{Key: key, Size: d.Size, ETag: d.ETag})
	}
	sortRemovals(sp.Removals)
	switch n := len(sp.Removals); {
	case n == 0:
	case p.Passed > 0:
		sp.DeleteRefused = errcode.E("sync", p.src.raw, ErrDeleteRefused,
			fmt.Errorf("the source listing passed over %d entries (each named above), so what the source holds is not known: none of the %d only in the destination is removed", p.Passed, n))
	case o.MaxDelete >= 0 && n > o.MaxDelete:
		sp.DeleteRefused = errcode.E("sync", p.dst.raw, ErrDeleteRefused,
			fmt.Errorf("%d are only in the destination, more than --max-delete %d: none is removed", n, o.MaxDelete))
	}
	return nil
}

// listWidth is how many listing requests a sync keeps in flight on each end (WalkTree).
const listWidth = 16

// checkOverlap refuses a source and a destination that are one tree or one inside the other:
// what the copy writes would be read again as source, or removed as only in the destination.
func (p *Plan) checkOverlap(cmd string) error {
	src, dst := p.src, p.dst
	switch {
	case src.st != nil && dst.st != nil && sameStore(src.loc, dst.loc):
		if overlaps(src.base, dst.base, p.o.Recursive) {
			return usage("%s: %s and %s overlap: one is inside the other", cmd, src.raw, dst.raw)
		}
	case src.local != nil && dst.local != nil:
		a, b := realPath(src.path), realPath(dst.path)
		if overlaps(filepath.ToSlash(a)+"/", filepath.ToSlash(b)+"/", true) {
			return usage("%s: %s and %s overlap: one is inside the other", cmd, src.raw, dst.raw)
		}
	}
	return nil
}

// listDest lists what the destination tree holds, by key: a missing local directory holds
// nothing. Directory markers, entries a walk passes over (a broken link, a special file), and
// names the source's wildcard or filter does not take (takes, on the name below the root)
// are left out: a sync neither compares them nor removes them.
func listDest(ctx context.Context, dst *End, takes func(rel string) bool) (map[string]store.ObjectInfo, error) {
	held := map[string]store.ObjectInfo{}
	var listing iter.Seq2[store.ObjectInfo, error]
	if dst.local != nil {
		if !isDir(dst.local.root) {
			return held, nil
		}
		listing = dst.local.Walk(ctx, "")
	} else {
		listing = dst.st.WalkTree(ctx, dst.base, listWidth)
	}
	for o, err := range listing {
		switch {
		case err != nil && Passed(err):
			continue
		case err != nil:
			return nil, err
		case strings.HasSuffix(o.Key, "/") || o.Key == dst.base:
			continue // a directory marker
		case !takes(strings.TrimPrefix(o.Key, dst.base)):
			continue
		}
		held[o.Key] = o
	}
	return held, nil
}

// unchanged reports whether the destination d, as listed, already holds t's source: the sizes
// are equal, and
//   - where both listings carry the object's CRC-32C (GCS's listings do), they are equal;
//   - between two stores whose ETags are content MD5s (md5s: S3 and S3-compatible stores),
//     where both ETags are MD5s (objects put whole), they are equal;
//   - else (a local file, an object put in parts, GCS, Azure) the destination was written no
//     earlier than the source last changed: its modification time is at or after the
//     source's (a time kept to the second, as S3 keeps it, read as the end of that second).
//     A file edited after its copy is newer than it, and is copied again.
//
// So a difference is never decided by a modification time alone.
func unchanged(t Task, d store.ObjectInfo, md5s bool) bool {
	if t.Size != d.Size || t.Size < 0 {
		return false
	}
	if t.srcCRC != "" && d.CRC32C != "" {
		return t.srcCRC == d.CRC32C // both listings carry their bytes' CRC-32C (GCS's, say)
	}
	if md5s && isMD5(t.srcETag) && isMD5(d.ETag) {
		return strings.EqualFold(t.srcETag, d.ETag)
	}
	if t.srcTime.IsZero() || d.LastModified.IsZero() {
		return false
	}
	changed := t.srcTime
	if changed.Nanosecond() == 0 {
		// A store that keeps times to the second (S3) truncates them: the source may have
		// changed as late as the end of that second.
		changed = changed.Add(time.Second - time.Nanosecond)
	}
	return !d.LastModified.Before(changed)
}

func isMD5(etag string) bool {
	if len(etag) != 32 {
		return false
	}
	for _, c := range etag {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func sortRemovals(rs []Removal) {
	slices.SortFunc(rs, func(a, b Removal) int { return strings.Compare(a.Key, b.Key) })
}

// Run copies what the plan lists (Plan.Run: every write conditional on what was listed), and
// then, only if every copy succeeded and no guard holds, removes what is only in the
// destination, each only while it is still the version listed (read again and compared, then
// deleted with If-Match where the store enforces it). A write or removal another writer got
// to first is left as that writer made it, given to r.Conflict, and the run ends with
// ErrSyncConflict once the rest is done (nothing is removed after a refused copy). A guard
// that held is returned (DeleteRefused) once the copies are made.
func (sp *SyncPlan) Run(ctx context.Context, prog Progress, r SyncReport) (SyncSummary, error) {
	sum := SyncSummary{Unchanged: sp.Unchanged}
	if len(sp.Tasks) > 0 {
		if prog == nil {
			prog = nopProgress{}
		}
		c := &conflicts{inner: prog, p: sp.Plan, report: r.Conflict}
		s, err := sp.Plan.Run(ctx, c)
		sum.Summary, sum.Conflicts = s, s.Refused
		switch {
		case err != nil && s.Refused > 0 && !c.failed && !store.IsContext(err):
			return sum, errcode.E("sync", sp.dst.raw, ErrSyncConflict,
				fmt.Errorf("%d destinations changed after they were listed and were left as the other writer made them (each named above); nothing was removed", s.Refused))
		case err != nil:
			return sum, err
		}
	}
	if !sp.delete || len(sp.Removals) == 0 {
		return sum, nil
	}
	if sp.DeleteRefused != nil {
		return sum, sp.DeleteRefused
	}
	removed, conflicted, err := sp.remove(ctx, r)
	sum.Removed, sum.Conflicts = removed, sum.Conflicts+conflicted
	switch {
	case err != nil:
		return sum, err
	case conflicted > 0:
		return sum, errcode.E("sync", sp.dst.raw, ErrSyncConflict,
			fmt.Errorf("%d of %d objects only in the destination changed after they were listed and were kept (each named above)", conflicted, len(sp.Removals)))
	}
	return sum, nil
}

// remove makes the removals, Jobs at a time; the first failure that is not a conflict stops
// them.
func (sp *SyncPlan) remove(ctx context.Context, r SyncReport) (removed, conflicted int, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	work := make(chan Removal)
	var wg sync.WaitGroup
	for range min(max(sp.o.Jobs, 1), len(sp.Removals)) {
		wg.Go(func() {
			for rm := range work {
				e := sp.removeOne(ctx, rm)
				name := sp.RemovalName(rm)
				mu.Lock()
				switch {
				case e == nil:
					removed++
					if r.Removed != nil {
						r.Removed(name)
					}
				case errors.Is(e, store.ErrPreconditionFailed):
					conflicted++
					if r.Conflict != nil {
						r.Conflict(name, e)
					}
				case err == nil || store.IsContext(err) && !store.IsContext(e):
					err = fmt.Errorf("%s: %w", name, e)
					cancel()
				}
				mu.Unlock()
			}
		})
	}
feed:
	for _, rm := range sp.Removals {
		select {
		case work <- rm:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err == nil {
		err = ctx.Err()
	}
	return removed, conflicted, err
}

// removeOne removes one object or file while it is the version listed.
func (sp *SyncPlan) removeOne(ctx context.Context, rm Removal) error {
	if l := sp.dst.local; l != nil {
		return l.Delete(ctx, rm.Key, rm.ETag)
	}
	st := sp.dst.st
	info, err := st.Head(ctx, rm.Key)
	switch {
	case errors.Is(err, store.ErrNotExist):
		return nil // gone already: what the removal was for
	case err != nil:
		return err
	case rm.ETag != "" && info.ETag != rm.ETag:
		return &store.Error{Op: "delete", Key: rm.Key, Kind: store.ErrPreconditionFailed,
			Err: fmt.Errorf("replaced after it was listed (ETag %s, listed %s)", info.ETag, rm.ETag)}
	}
	return st.Delete(ctx, rm.Key, &store.DeleteOptions{IfMatch: info.ETag})
}

// conflicts passes progress on and names each write refused because the destination changed.
type conflicts struct {
	inner  Progress
	p      *Plan
	report func(name string, err error)
	mu     sync.Mutex
	failed bool // a copy failed, not only refused
}

func (c *conflicts) Bytes(n int64) { c.inner.Bytes(n) }

func (c *conflicts) Done(t Task, info store.ObjectInfo, err error) {
	c.mu.Lock()
	switch {
	case err == nil || store.IsContext(err):
	case refusal(Options{}, t, err):
		if c.report != nil {
			c.report(c.p.dst.url(t.Dst), err)
		}
	default:
		c.failed = true
	}
	c.mu.Unlock()
	c.inner.Done(t, info, err)
}
