package lease

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wharfdata/wharf/errcode"
)

// ErrMayHaveLanded is joined to the error of a commit, save or release whose record write
// was cut (at the holder's deadline, or its answer lost) and could not be settled either (the
// store did not answer the settling write or the read after it): the write may have landed
// or not. Read the lease (Log.Lease, Log.Committed) before relying on either.
var ErrMayHaveLanded = errors.New("the write may have landed: read the lease before relying on its outcome")

// settleMax bounds a settle's own requests, with the skew bound (the shorter wins).
const settleMax = 5 * time.Second

// verdict is what a record read after a settling write failed its condition says of the cut
// write.
type verdict int

const (
	notLanded verdict = iota
	landed
	unknown // the record moved on to a later acquisition, which does not show it
)

// settler settles one kind of write.
type settler struct {
	// resend: the settling write is the cut write itself (a release, whose intent is to
	// release), not the record as it was.
	resend bool
	// shows judges the record read after the settling write failed its condition.
	shows func(ctx context.Context, st stored) verdict
}

// settle makes the outcome of op's record write definite after it was cut at the holder's
// deadline or its answer was lost (cut is what it failed with; rec is what it wrote). It
// sends a settling write at the revision the cut write was conditional on, under a bound of
// its own (the deadline's is spent): h's record as it was, with a fresh nonce (rec again for
// a release). That write landing consumes the revision, so the cut write never lands: cut
// is returned (nil when rec itself was resent). Its failed condition means the revision is
// gone: the record read then shows whether the cut write landed (nil) or not (cut, and the
// lease is lost unless the record is one to adopt). When the settling write or the read
// fails, or the record moved on to a later acquisition that does not show it, cut is
// returned with ErrMayHaveLanded and the lease is lost. A settle never releases the lease
// unless releasing was the cut write, and never moves the deadline of a lease lost.
func (h *Lease) settle(ctx context.Context, op string, kind *errcode.Code, what string, cut error, rec Record, s *settler) error {
	sctx, done := h.settleBound(ctx)
	defer done()
	if !s.resend {
		rec = h.rec
	}
	sent := h.l.clock.Mono()
	rev, _, conflict, err := writeRecord(sctx, h.l.kv, &rec, h.rev)
	switch {
	case err != nil:
		return h.unsettled(op, cut, err)
	case !conflict:
		h.rec, h.rev = rec, rev
		if h.Err() == nil && h.within() {
			h.wrote(sent)
		}
		if s.resend {
			return nil
		}
		return errors.Join(cut, fmt.Errorf("%s lease %q: settled: the write did not land (a settling write took its revision)", op, h.name))
	}
	st, err := readRecord(sctx, h.l.kv, h.name)
	if err != nil {
		return h.unsettled(op, cut, err)
	}
	switch s.shows(sctx, st) {
	case landed:
		h.rec, h.rev = st.rec, st.rev
		h.l.log.Info("lease: a cut write landed", "lease", h.name, "op", op, "fence", h.fence)
		return nil
	case unknown:
		return h.unsettled(op, cut, fmt.Errorf("the lease record moved on to fence %d (node %s), which does not show it", st.rec.Fence, st.rec.Holder))
	}
	if h.adoptable(st) {
		h.rec, h.rev = st.rec, st.rev
		return cut
	}
	lost := h.taken(op, kind, st, what)
	h.markLost(lost)
	return errors.Join(cut, lost)
}

// settleBound returns a context for a settle's requests: not cancelled with ctx's deadline
// bound (which cut the write), ending min(skew, settleMax) after now on the lease's clock, so
// that a settle is over before a contender that saw the holder's last write may take over.
func (h *Lease) settleBound(ctx context.Context) (context.Context, func()) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := h.l.clock.AfterFunc(min(h.l.cfg.Skew, settleMax), cancel)
	return sctx, func() { stop(); cancel() }
}

// unsettled is cut with ErrMayHaveLanded, why op's outcome is unknown; the lease is lost (its
// holder no longer knows its record).
func (h *Lease) unsettled(op string, cut, why error) error {
	err := errors.Join(cut, fmt.Errorf("%s lease %q: %w (settling it: %v)", op, h.name, ErrMayHaveLanded, why))
	h.markLost(err)
	return err
}

// committedAs settles a commit of e: the record naming e as its head under this fence, or a
// log holding e (only this holder writes e's key, and every later record keeps the log), is
// the commit landed.
func (h *Lease) committedAs(e *Entry) *settler {
	return &settler{shows: func(ctx context.Context, st stored) verdict {
		if st.found && st.rec.Head == e.Key && st.rec.Fence == h.fence {
			return landed
		}
		_, ok, err := h.l.Log(h.name).Committed(ctx, e.Seq, e.Fence)
		switch {
		case err != nil:
			return unknown
		case ok:
			return landed
		}
		return notLanded
	}}
}

// savedAs settles a save of state: the record holding it is the save landed.
func (h *Lease) savedAs(state []byte) *settler {
	return &settler{shows: func(_ context.Context, st stored) verdict {
		return h.shown(st, st.found && bytes.Equal(st.rec.State, state))
	}}
}

// releasedAs settles a release (saving state when it is not nil) by resending it: the record
// released under this fence (with the state) is the release landed.
func (h *Lease) releasedAs(state []byte) *settler {
	return &settler{resend: true, shows: func(_ context.Context, st stored) verdict {
		r := st.rec
		return h.shown(st, st.found && r.Released && r.Fence == h.fence && (state == nil || bytes.Equal(r.State, state)))
	}}
}

// shown is the verdict on a record that shows the cut write or not: a later acquisition's
// record that does not show it may have taken over the write's own (a released record is
// free at once), so it leaves the outcome unknown.
func (h *Lease) shown(st stored, shows bool) verdict {
	switch {
	case shows:
		return landed
	case st.found && st.rec.Fence > h.fence:
		return unknown
	}
	return notLanded
}
