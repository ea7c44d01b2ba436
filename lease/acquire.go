package lease

import (
	"context"
	"time"

	"github.com/wharfdata/wharf/store"
)

// Acquire takes the lease name. In ModeBucket it creates the lease object under If-None-Match,
// or replaces one that is released, or that this machine has seen unchanged for its TTL plus
// the skew bound, under If-Match on the ETag it read; the new fence is one above the old.
// Then it raises the pointer's fence to the new one by If-Match, so that no commit of an
// earlier holder can land after Acquire returns. A lease that stays held through cfg.Wait
// fails *HeldError (ErrHeld). In ModeMachine it takes this machine's lock file instead and
// writes nothing.
//
// The returned Lease is renewed only by Renew or Keep; Release it when done.
func (l *Leaser) Acquire(ctx context.Context, name string) (*Lease, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if l.mode == ModeMachine {
		return l.acquireMachine(ctx, name)
	}
	if l.cfg.Node == LocalNode {
		return nil, fail("acquire", name, ErrNodeIDLocal,
			"the node id is %q, which every machine has: set %s (or --node) to a name unique to this machine", LocalNode, EnvNodeID)
	}
	h, err := l.take(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := h.raise(ctx); err != nil {
		return nil, err
	}
	l.log.Info("lease: acquired", "lease", name, "node", l.cfg.Node, "fence", h.fence, "log_seq", h.ptr.Seq)
	return h, nil
}

// watch is what a contender remembers of a held lease: the version it saw and when, on its
// own monotonic clock.
type watch struct {
	start time.Duration // when the acquisition began
	etag  string
	since time.Duration
}

// expired reports whether the version etag has been seen unchanged for ttl + skew.
func (w *watch) expired(l *Leaser, etag string, ttl time.Duration) bool {
	now := l.clock.Mono()
	if etag != w.etag {
		w.etag, w.since = etag, now
		return false
	}
	return now-w.since >= ttl+l.cfg.Skew
}

// take writes the lease object, waiting through cfg.Wait for a held one to expire.
func (l *Leaser) take(ctx context.Context, name string) (*Lease, error) {
	w := watch{start: l.clock.Mono()}
	for {
		var cur Record
		etag, found, err := getJSON(ctx, l.s, LeaseKey(name), &cur)
		if err != nil {
			return nil, err
		}
		ttl := cur.TTL()
		if found && !cur.Released && !w.expired(l, etag, ttl) {
			now := l.clock.Mono()
			left := w.since + ttl + l.cfg.Skew - now
			if now-w.start >= l.cfg.Wait {
				return nil, &HeldError{Name: name, Holder: cur.Holder, Fence: cur.Fence, Until: l.clock.Now().Add(left),
					Self: cur.Holder == l.cfg.Node}
			}
			pause := min(left, l.cfg.Wait-(now-w.start), max(ttl/20, 50*time.Millisecond), 5*time.Second)
			if err := l.clock.Sleep(ctx, pause); err != nil {
				return nil, err
			}
			continue
		}
		if found && !cur.Released {
			l.log.Warn("lease: taking over a lease this machine saw unchanged for its TTL and the skew bound",
				"lease", name, "holder", cur.Holder, "fence", cur.Fence)
		}
		h, err := l.write(ctx, name, cur, etag, found)
		if err != nil || h != nil {
			return h, err
		}
		// Another contender wrote first: read again.
	}
}

// write replaces cur (or creates the lease) with this node as holder under the next fence.
// It returns nil, nil when the condition failed.
func (l *Leaser) write(ctx context.Context, name string, cur Record, etag string, found bool) (*Lease, error) {
	now := l.clock.Now()
	rec := Record{Name: name, Holder: l.cfg.Node, Fence: cur.Fence + 1, TTLMillis: l.cfg.TTL.Milliseconds(),
		AcquiredAt: now, RenewedAt: now}
	o := store.PutOptions{IfNoneMatch: !found, IfMatch: etag}
	if !found {
		o.IfMatch = ""
	}
	sent := l.clock.Mono()
	wr, err := putJSON(ctx, l.s, LeaseKey(name), &rec, o)
	if err != nil || wr.failed {
		return nil, err
	}
	h := &Lease{l: l, name: name, fence: rec.Fence, rec: rec, etag: wr.etag, renewed: sent, lost: make(chan struct{})}
	if found && cur.Released {
		h.hint = cur.Log
	}
	return h, nil
}

// raise makes the pointer carry h's fence. A pointer already at or above it means the lease
// object went back (deleted, or restored from a backup): the lease is moved above the
// pointer first.
func (h *Lease) raise(ctx context.Context) error {
	s, key := h.l.s, PointerKey(h.name)
	for {
		p, etag, found, err := h.readPointer(ctx)
		if err != nil {
			return err
		}
		if found && p.Fence >= h.fence {
			if err := h.bump(ctx, p.Fence); err != nil {
				return err
			}
			continue
		}
		next := p
		next.Name, next.Fence = h.name, h.fence
		o := store.PutOptions{IfNoneMatch: !found, IfMatch: etag}
		if !found {
			o.IfMatch = ""
		}
		wr, err := putJSON(ctx, s, key, &next, o)
		if err != nil {
			return err
		}
		if !wr.failed {
			h.ptr, h.ptrETag = next, wr.etag
			return nil
		}
		// The previous holder committed meanwhile, or a later acquisition raised it: read again.
	}
}

// readPointer reads the pointer, or takes it from the released lease's hint (once: a stale
// hint fails its If-Match, and the next round reads the pointer).
func (h *Lease) readPointer(ctx context.Context) (p Pointer, etag string, found bool, err error) {
	if hint := h.hint; hint != nil && hint.ETag != "" {
		h.hint = nil
		return hint.Pointer, hint.ETag, true, nil
	}
	etag, found, err = getJSON(ctx, h.l.s, PointerKey(h.name), &p)
	return p, etag, found, err
}

// bump moves h's fence above the pointer's fence by an If-Match replace of its lease object.
func (h *Lease) bump(ctx context.Context, above int64) error {
	rec := h.rec
	rec.Fence = above + 1
	wr, err := putJSON(ctx, h.l.s, LeaseKey(h.name), &rec, store.PutOptions{IfMatch: h.etag})
	if err != nil {
		return err
	}
	if wr.failed {
		return fail("acquire", h.name, ErrFenced,
			"a later acquisition took the lease over while fence %d raised the pointer (now at fence %d)", h.fence, above)
	}
	h.l.log.Warn("lease: the lease object's fence was behind its pointer's (deleted or restored from a backup): moved above it",
		"lease", h.name, "was", h.fence, "now", rec.Fence)
	h.rec, h.etag, h.fence = rec, wr.etag, rec.Fence
	return nil
}
