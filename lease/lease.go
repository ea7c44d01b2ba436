package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// Lease is a lease this process holds: its fence, the lease object's ETag after this
// holder's last write, and the pointer of its commit log. Its methods are safe for concurrent
// use; commits and renewals are serialized.
type Lease struct {
	l       *Leaser
	name    string
	machine *machineLock // ModeMachine

	mu       sync.Mutex
	fence    int64
	rec      Record
	etag     string
	renewed  time.Duration // monotonic time at which the last successful write was sent
	ptr      Pointer
	ptrETag  string
	hint     *PointerHint // from a released lease object, for raise
	released bool

	lostOnce sync.Once
	lost     chan struct{}
	lostErr  error
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
	return h.ptr
}

// Lost is closed once the lease is lost or released; Err then says why.
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

// within reports whether the holder is inside its safe window: less than TTL − skew since
// its last successful renewal, on this machine's monotonic clock.
func (h *Lease) within() bool {
	if h.machine != nil {
		return true
	}
	return h.l.clock.Mono()-h.renewed < h.l.cfg.TTL-h.l.cfg.Skew
}

// Valid returns nil while the holder may commit: the lease is not released or lost, and its
// last renewal is less than TTL − skew ago. Otherwise ErrNotHeld.
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
		return fail("commit", h.name, ErrNotHeld, "no renewal in the last %s (TTL %s less the skew bound %s): another node may hold it now",
			h.l.cfg.TTL-h.l.cfg.Skew, h.l.cfg.TTL, h.l.cfg.Skew)
	}
	return nil
}

// Renew replaces the lease object under If-Match on this holder's ETag, restarting its TTL.
// A lease taken over, released or changed by anyone else fails ErrNotHeld and is left as it
// is.
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
	rec := h.rec
	rec.RenewedAt, rec.TTLMillis = h.l.clock.Now(), h.l.cfg.TTL.Milliseconds()
	sent := h.l.clock.Mono()
	wr, err := putJSON(ctx, h.l.s, LeaseKey(h.name), &rec, store.PutOptions{IfMatch: h.etag})
	if err != nil {
		return err
	}
	if wr.failed {
		err := h.taken(ctx, op, ErrNotHeld)
		h.markLost(err)
		return err
	}
	h.rec, h.etag, h.renewed = rec, wr.etag, sent
	return nil
}

// taken reads the lease object after one of this holder's writes lost its condition and
// returns an error of kind naming who holds it now.
func (h *Lease) taken(ctx context.Context, op string, k *errcode.Code) error {
	var cur Record
	_, found, err := getJSON(ctx, h.l.s, LeaseKey(h.name), &cur)
	switch {
	case err != nil:
		return errors.Join(fail(op, h.name, k, "the lease object changed under fence %d", h.fence), err)
	case !found:
		return fail(op, h.name, k, "the lease object is gone (deleted by hand?); fence %d no longer holds it", h.fence)
	case cur.Fence > h.fence:
		return fail(op, h.name, k, "fenced past: node %s acquired it under fence %d (this holder had fence %d)", cur.Holder, cur.Fence, h.fence)
	case cur.Released:
		return fail(op, h.name, k, "released by someone else (now %s, fence %d)", cur.Holder, cur.Fence)
	}
	return fail(op, h.name, k, "the lease object changed under fence %d (now held by %s, fence %d)", h.fence, cur.Holder, cur.Fence)
}

// Release marks the lease released by an If-Match replace (never a delete, so its fence
// never goes back), and ends Keep. Releasing a lease this holder no longer holds fails
// ErrNotHeld and leaves it as it is; releasing twice is nil.
func (h *Lease) Release(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return nil
	}
	if h.machine != nil {
		h.released = true
		h.markLost(nil)
		return h.machine.unlock()
	}
	rec := h.rec
	rec.Released, rec.RenewedAt = true, h.l.clock.Now()
	if h.ptrETag != "" {
		rec.Log = &PointerHint{Pointer: h.ptr, ETag: h.ptrETag}
	}
	wr, err := putJSON(ctx, h.l.s, LeaseKey(h.name), &rec, store.PutOptions{IfMatch: h.etag})
	if err != nil {
		return err
	}
	if wr.failed {
		err := h.taken(ctx, "release", ErrNotHeld)
		h.markLost(err)
		return err
	}
	h.rec, h.etag, h.released = rec, wr.etag, true
	h.markLost(nil)
	h.l.log.Info("lease: released", "lease", h.name, "fence", h.fence)
	return nil
}

// Keep renews the lease every Config.Renewal until ctx ends or the lease is released or lost
// (Lost is then closed). A renewal that fails for another reason (the store unavailable) is
// retried sooner; once no renewal has succeeded for TTL − skew the lease is lost. Run it in a
// goroutine of its own.
func (h *Lease) Keep(ctx context.Context) {
	if h.machine != nil {
		return
	}
	c := h.l.cfg
	wait := c.Renewal()
	for {
		select {
		case <-h.lost:
			return
		default:
		}
		if err := h.l.clock.Sleep(ctx, wait); err != nil {
			return
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
		h.mu.Lock()
		ok := h.within()
		h.mu.Unlock()
		if !ok {
			h.markLost(fail("renew", h.name, ErrNotHeld, "no renewal succeeded within %s (TTL less the skew bound); last: %v", c.TTL-c.Skew, err))
			return
		}
		wait = max(c.Renewal()/4, 50*time.Millisecond)
	}
}

func (h *Lease) String() string {
	return fmt.Sprintf("lease %q held by %s under fence %d", h.name, h.l.cfg.Node, h.fence)
}
