package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/store"
)

// Next is the seq and fence the next commit will carry: a caller that must name its entry
// before committing (an export's manifest) uses it.
func (h *Lease) Next() (seq, fence int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rec.Seq + 1, h.fence
}

// Head returns the head entry of the log as this holder last wrote or read it (nil when the
// log has none): from the lease record itself when the entry is at most InlineMax bytes,
// which costs no request. With kind set, an entry of another kind fails
// ErrCursorKindMismatch.
func (h *Lease) Head(ctx context.Context, kind string) (*Entry, error) {
	h.mu.Lock()
	rec := h.rec
	h.mu.Unlock()
	return headOf(ctx, h.l.kv, rec, kind)
}

// Commit appends an entry of kind holding data to the lease's log: it creates the next entry
// under create-if-absent, carrying the fence, then replaces the lease record, naming the entry
// as the log's head, under the revision this holder wrote last. Only then is the entry
// readable; the replace also renews the lease. A record replaced by a later acquisition fails
// ErrFenced, and the entry written stays unreadable; so does a holder past its deadline. A
// replace cut at the deadline, or whose answer was lost beyond the store's settling, is
// settled by reading the record: a commit that landed returns its entry (the lease may be
// lost by then); one the read does not find may still land, and its error holds
// ErrMayHaveLanded. A log of another kind fails ErrCursorKindMismatch before anything is
// written.
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
	if err := h.ensure(); err != nil {
		return nil, err
	}
	if h.rec.Kind != "" && h.rec.Kind != kind {
		return nil, fail("commit", h.name, ErrCursorKindMismatch, "an entry of kind %q to a log of kind %q", kind, h.rec.Kind)
	}
	e := &Entry{Name: h.name, Kind: kind, Seq: h.rec.Seq + 1, Fence: h.fence, Node: h.l.cfg.Node,
		Prev: h.rec.Head, Time: h.l.clock.Now().UTC(), Data: raw}
	e.Key = EntryKey(h.name, e.Seq, e.Fence)
	if err := h.createEntry(ctx, e); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(e)
	now := h.l.clock.Now()
	what := fmt.Sprintf("; entry %s (seq %d) is not readable", e.Key, e.Seq)
	err = h.replace(ctx, "commit", ErrFenced, what, func(r *Record) {
		r.Kind, r.Seq, r.Head, r.HeadEntry, r.RenewedAt = kind, e.Seq, e.Key, inline(e, len(b)), now
	})
	if err != nil && !h.landed(ctx, e) {
		return nil, err
	}
	return e, nil
}

// landed settles a commit whose replace of the record failed: one cut at the holder's
// deadline, or whose answer was lost and not settled by the store, may have landed all the
// same. The log holding e (only this holder writes e's key) means it did: the commit is
// made, whatever became of the lease since.
func (h *Lease) landed(ctx context.Context, e *Entry) bool {
	if ctx.Err() != nil {
		return false
	}
	st, err := readRecord(ctx, h.l.kv, h.name)
	switch {
	case err != nil || st.rec.Seq < e.Seq:
		return false
	case st.rec.Head == e.Key && st.rec.Fence == h.fence:
		h.rec, h.rev = st.rec, st.rev
		return true
	}
	_, ok, err := h.l.Log(h.name).Committed(ctx, e.Seq, e.Fence)
	return err == nil && ok
}

// createEntry writes e at its key, create-if-absent, before the holder's deadline.
func (h *Lease) createEntry(ctx context.Context, e *Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	bctx, done, err := h.bound(ctx)
	if err != nil {
		return fenced(err)
	}
	defer done()
	_, err = h.l.kv.Create(bctx, e.Key, b)
	if errors.Is(err, cas.ErrConflict) {
		return &store.Error{Op: "commit", Key: e.Key, Kind: store.ErrPreconditionFailed,
			Err: fmt.Errorf("the log entry exists already (an earlier commit of fence %d whose answer was lost?)", h.fence)}
	}
	return fenced(h.deadlineErr(bctx, ctx, err))
}

// Save keeps state in the lease record itself, fenced and renewing like a commit, in one
// request: a job's small state that needs no history (a split's watermark). A record replaced
// by a later acquisition fails ErrFenced; the next holder finds the state in the record it
// takes over (Lease.State).
func (h *Lease) Save(ctx context.Context, state any) error {
	raw, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("save to lease %q: %w", h.name, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.ensure(); err != nil {
		return err
	}
	now := h.l.clock.Now()
	return h.replace(ctx, "save", ErrFenced, "", func(r *Record) { r.State, r.RenewedAt = raw, now })
}

// State is the state the lease record holds (Save), as this holder last wrote or read it.
func (h *Lease) State() json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append(json.RawMessage(nil), h.rec.State...)
}

// ensure makes sure the holder may write: not released, not lost, before its deadline. A
// lease lost to another holder is ErrFenced.
func (h *Lease) ensure() error {
	if h.released {
		return fail("commit", h.name, ErrNotHeld, "released")
	}
	if err := h.Err(); err != nil {
		return fenced(err)
	}
	if !h.within() {
		err := h.pastDeadline()
		h.markLost(err)
		return fenced(err)
	}
	return nil
}

// fenced makes a lost lease ErrFenced: a commit by a holder that was fenced past.
func fenced(err error) error {
	if errors.Is(err, ErrNotHeld) && !errors.Is(err, ErrFenced) {
		return errors.Join(ErrFenced, err)
	}
	return err
}

// Check returns nil while the holder may write: it is neither released nor lost, and before
// its deadline. A lease that was taken over, or whose deadline passed, is ErrFenced. A job
// checks it before each write that only the holder may make.
func (h *Lease) Check(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ensure()
}

// headOf returns the head entry of rec's log: carried in rec, or read from its key.
func headOf(ctx context.Context, kv cas.Store, rec Record, kind string) (*Entry, error) {
	if rec.Head == "" {
		return nil, nil
	}
	if e := rec.HeadEntry; e != nil {
		c := *e
		c.Key = rec.Head
		if kind != "" && c.Kind != kind {
			return nil, fail("read", rec.Name, ErrCursorKindMismatch, "entry %s is of kind %q, want %q", c.Key, c.Kind, kind)
		}
		return &c, nil
	}
	return readEntry(ctx, kv, rec.Name, rec.Head, kind)
}
