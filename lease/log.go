package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/store"
)

// Log reads a commit log as every reader must: from its lease record, following each entry's
// Prev, never from a listing, so that an entry a fenced holder wrote is never read. Reading
// needs no lease and no probe.
type Log struct {
	kv   cas.Store
	name string
}

// OpenLog returns the reader of the commit log name in s.
func OpenLog(s *store.Store, name string) *Log { return &Log{kv: cas.NewBucket(s), name: name} }

// OpenLogCAS returns the reader of the commit log name in kv.
func OpenLogCAS(kv cas.Store, name string) *Log { return &Log{kv: kv, name: name} }

// Lease reads the lease record; found is false when there is none.
func (g *Log) Lease(ctx context.Context) (rec Record, rev string, found bool, err error) {
	st, err := readRecord(ctx, g.kv, g.name)
	return st.rec, st.rev, st.found, err
}

// Pointer reads the head of the log from the lease record (or, for a lease wharf kept before
// record format 2, from its pointer); found is false when the lease was never acquired.
func (g *Log) Pointer(ctx context.Context) (p Pointer, found bool, err error) {
	st, err := readRecord(ctx, g.kv, g.name)
	if err != nil {
		return Pointer{}, false, err
	}
	p = st.rec.Pointer()
	p.Name = g.name
	return p, st.found || p.Fence > 0, nil
}

// State is what a lease shows: its record (nil when there is none here: never acquired, or a
// machine lease) and the log's head (nil when the lease was never acquired).
type State struct {
	Name    string   `json:"name"`
	Lease   *Record  `json:"lease"`
	Pointer *Pointer `json:"pointer"`
}

// State reads the lease record and the log's head.
func (g *Log) State(ctx context.Context) (State, error) {
	st := State{Name: g.name}
	rec, _, found, err := g.Lease(ctx)
	if err != nil {
		return st, err
	}
	if found {
		st.Lease = &rec
	}
	p, found, err := g.Pointer(ctx)
	if err != nil {
		return st, err
	}
	if found {
		st.Pointer = &p
	}
	return st, nil
}

// Head returns the entry the lease record names, or nil when the log has none: carried in the
// record when it is small, else read. With kind set, an entry of another kind fails
// ErrCursorKindMismatch.
func (g *Log) Head(ctx context.Context, kind string) (*Entry, error) {
	st, err := readRecord(ctx, g.kv, g.name)
	if err != nil {
		return nil, err
	}
	st.rec.Name = g.name
	return headOf(ctx, g.kv, st.rec, kind)
}

// Entry reads the entry at key. With kind set, an entry of another kind fails
// ErrCursorKindMismatch. It does not say whether the entry is committed: see Committed.
func (g *Log) Entry(ctx context.Context, key, kind string) (*Entry, error) {
	return readEntry(ctx, g.kv, g.name, key, kind)
}

func readEntry(ctx context.Context, kv cas.Store, name, key, kind string) (*Entry, error) {
	raw, _, err := kv.Get(ctx, key)
	if errors.Is(err, cas.ErrNoRecord) {
		return nil, &store.Error{Op: "get", Key: key, Kind: store.ErrNotExist,
			Err: fmt.Errorf("entry of lease %q's log named by the log but missing (deleted by hand?)", name)}
	}
	if err != nil {
		return nil, err
	}
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("%s is not a wharf log entry: %w", key, err)
	}
	e.Key = key
	if kind != "" && e.Kind != kind {
		return nil, fail("read", name, ErrCursorKindMismatch, "entry %s is of kind %q, want %q", key, e.Kind, kind)
	}
	return &e, nil
}

// Walk yields the committed entries from the head back to the first. It stops at the first
// error, which it yields with a nil entry.
func (g *Log) Walk(ctx context.Context, kind string) iter.Seq2[*Entry, error] {
	return func(yield func(*Entry, error) bool) {
		e, err := g.Head(ctx, kind)
		for e != nil || err != nil {
			if !yield(e, err) || err != nil {
				return
			}
			if e.Prev == "" {
				return
			}
			e, err = g.Entry(ctx, e.Prev, kind)
		}
	}
}

// Committed reports whether the entry that the holder of fence wrote as seq is part of the
// log (readable from the lease record), and returns it. Entries after a committed one carry
// a fence at least as high, so the walk back from the head stops early.
func (g *Log) Committed(ctx context.Context, seq, fence int64) (*Entry, bool, error) {
	st, err := readRecord(ctx, g.kv, g.name)
	if err != nil || st.rec.Seq < seq {
		return nil, false, err
	}
	st.rec.Name = g.name
	e, err := headOf(ctx, g.kv, st.rec, "")
	for e != nil && err == nil {
		switch {
		case e.Seq == seq:
			return e, e.Fence == fence, nil
		case e.Seq < seq || e.Fence < fence || e.Prev == "":
			return nil, false, nil
		}
		e, err = g.Entry(ctx, e.Prev, "")
	}
	return nil, false, err
}
