package lease

import (
	"context"
)

// The operations of a process that does not hold the Lease value itself: `wharf lease renew`
// and `release` run after the `wharf lease acquire` that took it has exited. They name the
// holder by this Leaser's node id and, when fence is not 0, the fence it acquired; the lease
// record is replaced under the revision just read, and left untouched (ErrNotHeld) when
// another node holds it, a later acquisition fenced past that fence, or it is released.
//
// A `lease run` of that node that holds the lease meanwhile adopts such a renewal (see
// Lease.Renew); a release by name ends it.

// Renew restarts the TTL of the lease name that this node holds. It never shortens the TTL
// the record has: a holder that still counts on it must not be taken over sooner.
func (l *Leaser) Renew(ctx context.Context, name string, fence int64) (Record, error) {
	return l.rewrite(ctx, "renew", name, fence, false)
}

// Release marks the lease name that this node holds released. One already released by this
// node under fence is nil.
func (l *Leaser) Release(ctx context.Context, name string, fence int64) (Record, error) {
	return l.rewrite(ctx, "release", name, fence, true)
}

func (l *Leaser) rewrite(ctx context.Context, op, name string, fence int64, release bool) (Record, error) {
	if err := CheckName(name); err != nil {
		return Record{}, err
	}
	for {
		st, err := readRecord(ctx, l.kv, name)
		cur := st.rec
		switch {
		case err != nil:
			return Record{}, err
		case !st.found:
			return Record{}, fail(op, name, ErrNotHeld, "no such lease")
		case cur.Holder != l.cfg.Node:
			return cur, fail(op, name, ErrNotHeld, "held by node %s (fence %d), not by %s", cur.Holder, cur.Fence, l.cfg.Node)
		case fence != 0 && cur.Fence != fence:
			return cur, fail(op, name, ErrNotHeld, "fenced past: node %s acquired fence %d after fence %d", cur.Holder, cur.Fence, fence)
		case cur.Released && release:
			return cur, nil
		case cur.Released:
			return cur, fail(op, name, ErrNotHeld, "released (fence %d)", cur.Fence)
		}
		next := cur
		next.RenewedAt, next.Released = l.clock.Now(), release
		if !release {
			next.TTLMillis = max(cur.TTLMillis, l.cfg.TTL.Milliseconds())
		}
		_, _, conflict, err := writeRecord(ctx, l.kv, &next, st.rev)
		if err != nil {
			return Record{}, err
		}
		if !conflict {
			return next, nil
		}
	}
}
