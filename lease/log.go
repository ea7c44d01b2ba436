package lease

import (
	"context"
	"fmt"
	"iter"

	"github.com/wharfdata/wharf/store"
)

// Log reads a commit log as every reader must: from its pointer, following each entry's Prev,
// never from a listing, so that an entry a fenced holder wrote is never read. Reading needs no
// lease and no probe.
type Log struct {
	s    *store.Store
	name string
}

// OpenLog returns the reader of the commit log name in s.
func OpenLog(s *store.Store, name string) *Log { return &Log{s: s, name: name} }

// Lease reads the lease object; found is false when there is none.
func (g *Log) Lease(ctx context.Context) (rec Record, etag string, found bool, err error) {
	etag, found, err = getJSON(ctx, g.s, LeaseKey(g.name), &rec)
	return rec, etag, found, err
}

// Pointer reads the pointer; found is false when the lease was never acquired.
func (g *Log) Pointer(ctx context.Context) (p Pointer, found bool, err error) {
	_, found, err = getJSON(ctx, g.s, PointerKey(g.name), &p)
	return p, found, err
}

// Head returns the entry the pointer names, or nil when the log has none. With kind set, an
// entry of another kind fails ErrCursorKindMismatch.
func (g *Log) Head(ctx context.Context, kind string) (*Entry, error) {
	p, found, err := g.Pointer(ctx)
	if err != nil || !found || p.Head == "" {
		return nil, err
	}
	return g.Entry(ctx, p.Head, kind)
}

// Entry reads the entry at key. With kind set, an entry of another kind fails
// ErrCursorKindMismatch. It does not say whether the entry is committed: see Committed.
func (g *Log) Entry(ctx context.Context, key, kind string) (*Entry, error) {
	var e Entry
	_, found, err := getJSON(ctx, g.s, key, &e)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &store.Error{Op: "get", Key: key, Kind: store.ErrNotExist,
			Err: fmt.Errorf("entry of lease %q's log named by the log but missing (deleted by hand?)", g.name)}
	}
	e.Key = key
	if kind != "" && e.Kind != kind {
		return nil, fail("read", g.name, ErrCursorKindMismatch, "entry %s is of kind %q, want %q", key, e.Kind, kind)
	}
	return &e, nil
}

// Walk yields the committed entries from the head back to the first. It stops at the first
// error, which it yields with a nil entry.
func (g *Log) Walk(ctx context.Context, kind string) iter.Seq2[*Entry, error] {
	return func(yield func(*Entry, error) bool) {
		p, found, err := g.Pointer(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		if !found {
			return
		}
		for key := p.Head; key != ""; {
			e, err := g.Entry(ctx, key, kind)
			if !yield(e, err) || err != nil {
				return
			}
			key = e.Prev
		}
	}
}

// Committed reports whether the entry that the holder of fence wrote as seq is part of the
// log (readable from the pointer), and returns it. Entries after a committed one carry a
// fence at least as high, so the walk back from the head stops early.
func (g *Log) Committed(ctx context.Context, seq, fence int64) (*Entry, bool, error) {
	p, found, err := g.Pointer(ctx)
	if err != nil || !found || p.Seq < seq {
		return nil, false, err
	}
	key := p.Head
	for key != "" {
		e, err := g.Entry(ctx, key, "")
		if err != nil {
			return nil, false, err
		}
		switch {
		case e.Seq == seq:
			return e, e.Fence == fence, nil
		case e.Seq < seq || e.Fence < fence:
			return nil, false, nil
		}
		key = e.Prev
	}
	return nil, false, nil
}
