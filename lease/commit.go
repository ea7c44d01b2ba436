package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wharfdata/wharf/store"
)

// Next is the seq and fence the next commit will carry: a caller that must name its entry
// before committing (an export's manifest) uses it.
func (h *Lease) Next() (seq, fence int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ptr.Seq + 1, h.fence
}

// Commit appends an entry of kind holding data to the lease's log: it creates the next entry
// under If-None-Match, carrying the fence, then advances the pointer to it by If-Match. Only
// then is the entry readable. A holder past its safe window renews first. A pointer raised by
// a later acquisition fails ErrFenced, and the entry written stays unreadable; a log of
// another kind fails ErrCursorKindMismatch before anything is written.
func (h *Lease) Commit(ctx context.Context, kind string, data any) (*Entry, error) {
	if kind == "" {
		return nil, &store.Error{Op: "commit", Key: h.name, Kind: store.ErrConfig, Err: errors.New("no entry kind")}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("commit to lease %q: %w", h.name, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.ensure(ctx); err != nil {
		return nil, err
	}
	if h.ptr.Kind != "" && h.ptr.Kind != kind {
		return nil, fail("commit", h.name, ErrCursorKindMismatch, "an entry of kind %q to a log of kind %q", kind, h.ptr.Kind)
	}
	e := &Entry{Name: h.name, Kind: kind, Seq: h.ptr.Seq + 1, Fence: h.fence, Node: h.l.cfg.Node,
		Prev: h.ptr.Head, Time: h.l.clock.Now().UTC(), Data: raw}
	e.Key = EntryKey(h.name, e.Seq, e.Fence)
	wr, err := putJSON(ctx, h.l.s, e.Key, e, store.PutOptions{IfNoneMatch: true})
	if err != nil {
		return nil, err
	}
	if wr.failed {
		return nil, &store.Error{Op: "commit", Key: e.Key, Kind: store.ErrPreconditionFailed,
			Err: fmt.Errorf("the log entry exists already (an earlier commit of fence %d whose answer was lost?)", h.fence)}
	}
	next := Pointer{Name: h.name, Kind: kind, Fence: h.fence, Seq: e.Seq, Head: e.Key}
	wr, err = putJSON(ctx, h.l.s, PointerKey(h.name), &next, store.PutOptions{IfMatch: h.ptrETag})
	if err != nil {
		return nil, err
	}
	if wr.failed {
		return nil, h.fenced(ctx, e)
	}
	h.ptr, h.ptrETag = next, wr.etag
	return e, nil
}

// ensure makes sure the holder may commit: not released, and inside its safe window, or
// renewed now. A renewal that finds the lease taken over is ErrFenced.
func (h *Lease) ensure(ctx context.Context) error {
	if h.released {
		return fail("commit", h.name, ErrNotHeld, "released")
	}
	if err := h.Err(); err != nil {
		return fenced(err)
	}
	if h.within() {
		return nil
	}
	h.l.log.Warn("lease: past the safe window; renewing before the commit", "lease", h.name, "fence", h.fence)
	return fenced(h.renew(ctx, "commit"))
}

// fenced makes a lost lease ErrFenced: a commit by a holder that was fenced past.
func fenced(err error) error {
	if errors.Is(err, ErrNotHeld) && !errors.Is(err, ErrFenced) {
		return errors.Join(ErrFenced, err)
	}
	return err
}

// fenced reads the pointer after an advance lost its condition and says why.
func (h *Lease) fenced(ctx context.Context, e *Entry) error {
	var p Pointer
	_, _, err := getJSON(ctx, h.l.s, PointerKey(h.name), &p)
	var why error
	switch {
	case err != nil:
		why = fail("commit", h.name, ErrFenced, "the pointer changed under fence %d; entry %s is not readable", h.fence, e.Key)
		why = errors.Join(why, err)
	case p.Fence > h.fence:
		why = fail("commit", h.name, ErrFenced, "fence %d was raised to %d by a later acquisition; entry %s (seq %d) is not readable",
			h.fence, p.Fence, e.Key, e.Seq)
	default:
		why = fail("commit", h.name, ErrFenced, "the pointer changed under fence %d (now seq %d, fence %d): entry %s is not readable",
			h.fence, p.Seq, p.Fence, e.Key)
	}
	h.markLost(why)
	return why
}

// Check returns nil while the holder may write: it is neither released nor lost, and inside
// its safe window, or renewed now. A lease that was taken over is ErrFenced. A job checks it
// before each write that only the holder may make.
func (h *Lease) Check(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ensure(ctx)
}
