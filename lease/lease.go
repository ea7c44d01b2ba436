package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wharfdata/wharf/errcode"
)

// Lease is a lease this process holds: its fence, the lease record as this holder last wrote
// (or read) it, and its revision. Its methods are safe for concurrent use; commits, saves and
// renewals are serialized.
//
// A bucket lease has a deadline: TTL − skew after the send of its last successful write
// (acquisition, renewal, commit or save). A timer of its own, independent of any request in
// flight, closes Lost when the deadline passes; from then on the lease is lost for good, and
// no request a holder makes runs past its deadline (each is cancelled there).
type Lease struct {
	l       *Leaser
	name    string
	machine *machineLock // ModeMachine

	mu       sync.Mutex
	fence    int64
	rec      Record
	rev      string // the record's revision after this holder's last write or read; "" when none
	released bool
	// oldPointer is the revision of the format-1 pointer this acquisition took the log's
	// head from, which it raises (fenceOld); "" when there was none.
	oldPointer string

	deadline  atomic.Int64 // on the Leaser's monotonic clock; math.MaxInt64 for a machine lease
	tmu       sync.Mutex
	stopTimer func() bool

	lostOnce sync.Once
	lost     chan struct{}
	lostErr  error
}

// ErrDeadlinePassed is joined to the ErrNotHeld of a lease lost because no renewal succeeded
// by its deadline (rather than one found taken over or released).
var ErrDeadlinePassed = errors.New("the holder's deadline passed")

// ErrMayHaveLanded is joined to ErrDeadlinePassed when the holder's deadline cut one of its
// writes of the record (a renewal, save, commit or release) with the request in flight: the
// store may apply it all the same. It lands, if it does, before any takeover, since it is
// conditional on the revision this holder wrote last, which a takeover replaces; so the next
// holder finds the record either as it was or as the cut write made it. A caller that needs
// to know (a commit whose entry matters) reads the log: Commit already did, and returns the
// entry when it found it.
var ErrMayHaveLanded = errors.New("the write was cut at the deadline in flight and may have landed")

// errBound is the cause of a request cancelled at its holder's deadline.
var errBound = errors.New("the lease's deadline")

func newLease(l *Leaser, name string, rec Record, rev string) *Lease {
	h := &Lease{l: l, name: name, fence: rec.Fence, rec: rec, rev: rev, lost: make(chan struct{})}
	h.deadline.Store(math.MaxInt64)
	return h
}

// Name is the lease's name.
func (h *Lease) Name() string { return h.name }

// Fence is the fencing token: one above every earlier acquisition's.
func (h *Lease) Fence() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fence
}

// Node is the holder's node id.
func (h *Lease) Node() string { return h.l.cfg.Node }

// Machine reports whether this is a machine lease (a lock file), not a bucket lease.
func (h *Lease) Machine() bool { return h.machine != nil }

// Pointer is the head of the commit log as this holder last wrote or read it.
func (h *Lease) Pointer() Pointer {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.rec.Pointer()
	p.Fence = h.fence
	return p
}

// Record is the lease record as this holder last wrote or read it.
func (h *Lease) Record() Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rec
}

// Deadline is the time by this machine's wall clock at which the lease is lost unless a
// renewal succeeds first; zero for a machine lease.
func (h *Lease) Deadline() time.Time {
	d := time.Duration(h.deadline.Load())
	if h.machine != nil || d == math.MaxInt64 {
		return time.Time{}
	}
	return h.l.clock.Now().Add(d - h.l.clock.Mono())
}

// Lost is closed once the lease is lost (taken over, released by someone else, or past its
// deadline) or released; Err then says why.
func (h *Lease) Lost() <-chan struct{} { return h.lost }

// Err is why the lease was lost (nil while it is held, or after a clean Release).
func (h *Lease) Err() error {
	select {
	case <-h.lost:
		return h.lostErr
	default:
		return nil
	}
}

func (h *Lease) markLost(err error) {
	h.lostOnce.Do(func() {
		h.lostErr = err
		close(h.lost)
	})
}

// wrote moves the deadline to TTL − skew after sent, the send of a write that succeeded,
// and sets the timer that loses the lease there.
func (h *Lease) wrote(sent time.Duration) {
	if h.machine != nil {
		return
	}
	c := h.l.cfg
	d := plus(sent, c.TTL-c.Skew)
	h.deadline.Store(int64(d))
	h.tmu.Lock()
	defer h.tmu.Unlock()
	if h.stopTimer != nil {
		h.stopTimer()
	}
	h.stopTimer = h.l.clock.AfterFunc(d-h.l.clock.Mono(), h.expire)
}

// expire is the deadline timer: a deadline no renewal moved loses the lease. It takes no
// lock, so a request hung while holding one cannot delay it.
func (h *Lease) expire() {
	if h.l.clock.Mono() >= time.Duration(h.deadline.Load()) {
		h.markLost(h.pastDeadline())
	}
}

func (h *Lease) stopDeadline() {
	h.tmu.Lock()
	defer h.tmu.Unlock()
	if h.stopTimer != nil {
		h.stopTimer()
	}
}

func (h *Lease) pastDeadline() error {
	c := h.l.cfg
	return errors.Join(fail("renew", h.name, ErrNotHeld,
		"no renewal succeeded by this holder's deadline, %s (TTL %s less the skew bound %s) after the last one was sent: another node may take the lease over %s after that",
		c.TTL-c.Skew, c.TTL, c.Skew, 2*c.Skew), ErrDeadlinePassed)
}

// within reports whether the holder is before its deadline.
func (h *Lease) within() bool {
	return h.l.clock.Mono() < time.Duration(h.deadline.Load())
}

// bound returns ctx cancelled at the holder's deadline (done releases it), or the lease's
// loss when the deadline has passed.
func (h *Lease) bound(ctx context.Context) (context.Context, func(), error) {
	if h.machine != nil {
		return ctx, func() {}, nil
	}
	left := time.Duration(h.deadline.Load()) - h.l.clock.Mono()
	if left <= 0 {
		err := h.pastDeadline()
		h.markLost(err)
		return nil, nil, err
	}
	bctx, cancel := context.WithCancelCause(ctx)
	stop := h.l.clock.AfterFunc(left, func() { cancel(errBound) })
	return bctx, func() { stop(); cancel(context.Canceled) }, nil
}

// deadlineErr turns the failure of a request that bound cancelled at the deadline into the
// lease's loss; any other failure is returned as it is.
func (h *Lease) deadlineErr(bctx, ctx context.Context, err error) error {
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(bctx), errBound) {
		lost := h.pastDeadline()
		h.markLost(lost)
		return lost
	}
	return err
}

// cutErr is deadlineErr for a write of the record: one that bound cut at the deadline was in
// flight and may land all the same, which the error says (ErrMayHaveLanded).
func (h *Lease) cutErr(bctx, ctx context.Context, err error) error {
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(bctx), errBound) {
		return errors.Join(h.deadlineErr(bctx, ctx, err), ErrMayHaveLanded)
	}
	return err
}

// Valid returns nil while the holder may commit: the lease is not released or lost, and its
// deadline has not passed. Otherwise ErrNotHeld.
func (h *Lease) Valid() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.Err(); err != nil {
		return err
	}
	if h.released {
		return fail("commit", h.name, ErrNotHeld, "released")
	}
	if !h.within() {
		return h.pastDeadline()
	}
	return nil
}

// Renew replaces the lease record under its revision as this holder wrote it last,
// restarting its TTL. A lease taken over, released or changed by anyone else fails
// ErrNotHeld and is left as it is; a renewal by `wharf lease renew` for this node (the same
// fence, not released) is adopted, and the renewal made on it.
func (h *Lease) Renew(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.renew(ctx, "renew")
}

func (h *Lease) renew(ctx context.Context, op string) error {
	if h.released {
		return fail(op, h.name, ErrNotHeld, "released")
	}
	if h.machine != nil {
		return nil
	}
	if err := h.notHeld(op); err != nil {
		return err
	}
	now := h.l.clock.Now()
	return h.replace(ctx, op, ErrNotHeld, "", func(r *Record) { r.RenewedAt = now })
}

// replace writes the lease record as change makes it from this holder's, under the revision
// this holder wrote last, before the deadline; the send of a write that lands moves the
// deadline. A failed condition reads the record: one this node's `wharf lease renew` wrote
// (still this fence and node, not released, the log as this holder left it) is adopted and
// the write made again on it; anything else loses the lease with an error of kind, which
// what (the entry a commit wrote) completes.
func (h *Lease) replace(ctx context.Context, op string, kind *errcode.Code, what string, change func(*Record)) error {
	bctx, done, err := h.bound(ctx)
	if err != nil {
		return fenceKind(err, kind)
	}
	defer done()
	for try := 0; ; try++ {
		rec := h.rec
		rec.TTLMillis = h.l.cfg.TTL.Milliseconds()
		change(&rec)
		sent := h.l.clock.Mono()
		rev, _, conflict, err := writeRecord(bctx, h.l.kv, &rec, h.rev)
		if err != nil {
			return fenceKind(h.cutErr(bctx, ctx, err), kind)
		}
		if !conflict {
			h.rec, h.rev = rec, rev
			h.wrote(sent)
			return nil
		}
		st, err := readRecord(bctx, h.l.kv, h.name)
		if err != nil {
			err = h.deadlineErr(bctx, ctx, err)
			return errors.Join(fail(op, h.name, kind, "the lease record changed under fence %d%s", h.fence, what), err)
		}
		if try < 2 && h.adoptable(st) {
			h.l.log.Info("lease: adopting a renewal made for this node", "lease", h.name, "fence", h.fence)
			h.rec, h.rev = st.rec, st.rev
			continue
		}
		lost := h.taken(op, kind, st, what)
		h.markLost(lost)
		return lost
	}
}

// notHeld is ErrNotHeld for op, with why, once the lease is lost; nil while it is held.
func (h *Lease) notHeld(op string) error {
	err := h.Err()
	if err == nil || errors.Is(err, ErrNotHeld) && !errors.Is(err, ErrFenced) {
		return err
	}
	return errors.Join(fail(op, h.name, ErrNotHeld, "this holder lost the lease"), err)
}

// adoptable reports whether st is this holder's lease as someone else renewed it for this
// node: only an acquisition changes the fence, and only this holder commits under it.
func (h *Lease) adoptable(st stored) bool {
	r := st.rec
	return h.machine == nil && st.found && r.Fence == h.fence && r.Holder == h.l.cfg.Node && !r.Released &&
		r.Seq == h.rec.Seq && r.Head == h.rec.Head
}

// fenceKind makes a loss found by a commit ErrFenced.
func fenceKind(err error, kind *errcode.Code) error {
	if kind == ErrFenced {
		return fenced(err)
	}
	return err
}

// taken says who holds the lease now, after one of this holder's writes lost its condition.
func (h *Lease) taken(op string, k *errcode.Code, st stored, what string) error {
	cur := st.rec
	switch {
	case !st.found:
		return fail(op, h.name, k, "the lease record is gone (deleted by hand?); fence %d no longer holds it%s", h.fence, what)
	case cur.Fence > h.fence:
		return fail(op, h.name, k, "fence %d was raised to %d by a later acquisition (node %s)%s", h.fence, cur.Fence, cur.Holder, what)
	case cur.Released:
		return fail(op, h.name, k, "released by someone else (now %s, fence %d)%s", cur.Holder, cur.Fence, what)
	}
	return fail(op, h.name, k, "the lease record changed under fence %d (now held by %s, fence %d, at seq %d)%s", h.fence, cur.Holder, cur.Fence, cur.Seq, what)
}

// Release marks the lease released by a replace under its revision (never a delete, so its
// fence never goes back), and ends Keep. Releasing a lease this holder no longer holds, or
// past its deadline, fails ErrNotHeld and leaves it as it is; releasing twice is nil.
func (h *Lease) Release(ctx context.Context) error {
	return h.release(ctx, nil)
}

// ReleaseWith is Release that also saves state in the record (as Save does), in the same one
// write: a job's last word on what the lease guarded (a backfill's split, done), which the
// next holder finds in the record (Lease.State) and a reader in Log.Lease. A machine lease
// saves it with the same write (its record is written; the lock is then unlocked).
func (h *Lease) ReleaseWith(ctx context.Context, state any) error {
	raw, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("release lease %q: %w", h.name, err)
	}
	return h.release(ctx, raw)
}

// release releases the lease, saving state in the record when it is not nil.
func (h *Lease) release(ctx context.Context, state json.RawMessage) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return nil
	}
	if h.machine != nil && state != nil {
		now := h.l.clock.Now()
		if err := h.replace(ctx, "release", ErrNotHeld, "", func(r *Record) { r.State, r.RenewedAt = state, now }); err != nil {
			return err
		}
	}
	if h.machine != nil {
		h.released = true
		h.markLost(nil)
		return h.machine.unlock()
	}
	if err := h.notHeld("release"); err != nil {
		return err
	}
	now := h.l.clock.Now()
	err := h.replace(ctx, "release", ErrNotHeld, "", func(r *Record) {
		r.Released, r.RenewedAt = true, now
		if state != nil {
			r.State = state
		}
	})
	if err != nil {
		return err
	}
	h.released = true
	h.stopDeadline()
	h.markLost(nil)
	h.l.log.Info("lease: released", "lease", h.name, "fence", h.fence)
	return nil
}

// Renewing runs Keep in a goroutine of its own, detached from ctx's cancellation (a run that
// is cancelled still holds the lease until it has written its last word and released it),
// until stop is called; stop returns once Keep has returned, so no renewal races the release
// that follows it.
func (h *Lease) Renewing(ctx context.Context) (stop func()) {
	kctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	kept := make(chan struct{})
	go func() { h.Keep(kctx); close(kept) }()
	return func() { cancel(); <-kept }
}

// Keep renews the lease once Config.Renewal has passed since the holder's last successful
// write (an acquisition, renewal, commit or save: each restarts the TTL), until ctx ends or
// the lease is released or lost (Lost is then closed); a holder that commits or saves more
// often than that is never renewed on top. A renewal that fails for another reason (the
// store unavailable) is retried sooner; the deadline timer loses the lease once none has
// succeeded for TTL − skew, whatever a renewal in flight is doing. Run it in a goroutine of
// its own.
func (h *Lease) Keep(ctx context.Context) {
	if h.machine != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-h.lost:
			cancel()
		case <-ctx.Done():
		}
	}()
	c := h.l.cfg
	wait := c.Renewal()
	for {
		if err := h.l.clock.Sleep(ctx, wait); err != nil {
			return
		}
		if left := h.untilRenewal(); left > 0 {
			wait = left // a commit or save renewed the lease meanwhile
			continue
		}
		err := h.Renew(ctx)
		switch {
		case err == nil:
			wait = c.Renewal()
			continue
		case ctx.Err() != nil:
			return
		case errors.Is(err, ErrNotHeld):
			h.l.log.Error("lease: lost", "lease", h.name, "fence", h.Fence(), "error", err)
			return
		}
		h.l.log.Warn("lease: renewal failed; retrying", "lease", h.name, "error", err)
		wait = max(c.Renewal()/4, 50*time.Millisecond)
	}
}

// untilRenewal is how long until Config.Renewal has passed since the send of the holder's
// last successful write (its deadline is TTL − skew after that send).
func (h *Lease) untilRenewal() time.Duration {
	c := h.l.cfg
	last := time.Duration(h.deadline.Load()) - (c.TTL - c.Skew)
	return last + c.Renewal() - h.l.clock.Mono()
}

func (h *Lease) String() string {
	return fmt.Sprintf("lease %q held by %s under fence %d", h.name, h.l.cfg.Node, h.fence)
}
