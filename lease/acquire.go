package lease

import (
	"context"
	"encoding/json"
	"time"
)

// Acquire takes the lease name. In ModeBucket and ModeCAS it creates the lease record, or
// replaces one that is released, or that this machine has seen unchanged for its TTL plus the
// skew bound, under the revision it read; the new fence is one above the old. That one write
// fences every earlier holder: each of their renewals, commits and releases is a replace
// under the revision they wrote last, which this acquisition replaced. The record carries the
// log's head, so the acquisition has read it too (Lease.Head). A lease that stays held through
// cfg.Wait fails *HeldError (ErrHeld). Every CheckEvery-th acquisition also checks that the
// store still enforces conditions (ErrCoordinationUnproven when it does not). In ModeMachine
// it takes this machine's lock file instead and writes nothing.
//
// The returned Lease is renewed only by Renew or Keep (its deadline runs from the
// acquisition's send); Release it when done. An acquisition whose write took longer than
// TTL − Skew to be answered has raised the fence, but its deadline has passed before it could
// be used: it fails ErrNotHeld joined to ErrDeadlinePassed, and the record it wrote expires
// like an abandoned one.
func (l *Leaser) Acquire(ctx context.Context, name string) (*Lease, error) {
	return l.AcquireIf(ctx, name, nil)
}

// AcquireIf is Acquire for a job whose leases end in a state of their own (a backfill's
// split, done): each time it reads the lease record, before it judges whether the lease is
// held, it gives want the state the record holds (Lease.Save; nil when there is none), and
// when want returns an error it writes nothing and returns that error. So a caller learns the
// state and takes the lease in the one read an acquisition makes anyway. A nil want takes
// any. In ModeMachine want is given the state the record holds once the lock is taken.
func (l *Leaser) AcquireIf(ctx context.Context, name string, want func(state json.RawMessage) error) (*Lease, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if l.mode == ModeMachine {
		return l.acquireMachine(ctx, name, want)
	}
	if l.cfg.Node == LocalNode {
		return nil, fail("acquire", name, ErrNodeIDLocal,
			"the node id is %q, which every machine has: set %s (or --node) to a name unique to this machine", LocalNode, EnvNodeID)
	}
	if err := l.check.err(); err != nil {
		return nil, err
	}
	h, replaced, raw, err := l.take(ctx, name, want)
	if err != nil {
		return nil, err
	}
	err = l.fenceOld(ctx, h)
	if err == nil {
		err = l.verify(ctx, h, replaced, raw)
	}
	if err != nil {
		_ = h.Release(context.WithoutCancel(ctx)) // so that no one waits for a lease no one holds
		h.markLost(err)
		return nil, err
	}
	l.log.Info("lease: acquired", "lease", name, "node", l.cfg.Node, "fence", h.fence, "log_seq", h.rec.Seq)
	return h, nil
}

// watch is what a contender remembers of a held lease: the version it saw and when, on its
// own monotonic clock.
type watch struct {
	start time.Duration // when the acquisition began
	rev   string
	since time.Duration
	// changed: the version was another at this Leaser's previous look (someone wrote it).
	changed bool
}

// expired reports whether the version rev has been seen unchanged for ttl + skew.
func (w *watch) expired(l *Leaser, rev string, ttl time.Duration) bool {
	now := l.clock.Mono()
	w.changed = w.rev != "" && rev != w.rev
	if rev != w.rev {
		w.rev, w.since = rev, now
		return false
	}
	return now-w.since >= plus(ttl, l.cfg.Skew)
}

// take writes the lease record, waiting through cfg.Wait for a held one to expire. It
// returns the revision it replaced ("" when it created the record) and the bytes it wrote.
// What it saw of a held lease is kept for the Leaser's next acquisition of name, so that a
// caller that tries again and again (Wait 0) still takes over a lease seen unchanged for its
// TTL and the skew bound since it first saw it.
func (l *Leaser) take(ctx context.Context, name string, want func(json.RawMessage) error) (*Lease, string, []byte, error) {
	w := l.watchOf(name)
	w.start = l.clock.Mono()
	defer func() { l.keepWatch(name, w) }()
	for {
		st, err := readRecord(ctx, l.kv, name)
		if err != nil {
			return nil, "", nil, err
		}
		cur := st.rec
		if want != nil {
			if err := want(cur.State); err != nil {
				return nil, "", nil, err
			}
		}
		ttl := cur.TTL()
		if st.found && !cur.Released && !w.expired(l, st.rev, ttl) {
			if err := l.held(ctx, name, cur, &w, ttl); err != nil {
				return nil, "", nil, err
			}
			continue
		}
		if st.found && !cur.Released {
			l.log.Warn("lease: taking over a lease this machine saw unchanged for its TTL and the skew bound",
				"lease", name, "holder", cur.Holder, "fence", cur.Fence)
		}
		h, raw, err := l.write(ctx, name, st)
		if h != nil {
			w = watch{} // taken: nothing to remember
		}
		if err != nil || h != nil {
			return h, st.rev, raw, err
		}
		// Another contender wrote first: read again.
	}
}

func (l *Leaser) watchOf(name string) watch {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	return l.watches[name]
}

func (l *Leaser) keepWatch(name string, w watch) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if w.rev == "" {
		delete(l.watches, name)
		return
	}
	if l.watches == nil {
		l.watches = map[string]watch{}
	}
	l.watches[name] = w
}

// held waits for the held lease cur to expire or be released, or fails *HeldError once
// cfg.Wait has passed.
func (l *Leaser) held(ctx context.Context, name string, cur Record, w *watch, ttl time.Duration) error {
	now := l.clock.Mono()
	left := plus(w.since, plus(ttl, l.cfg.Skew)) - now
	if now-w.start >= l.cfg.Wait {
		return &HeldError{Name: name, Holder: cur.Holder, Fence: cur.Fence, Until: l.clock.Now().Add(left),
			Self: cur.Holder == l.cfg.Node, Live: w.changed}
	}
	pause := min(left, l.cfg.Wait-(now-w.start), max(ttl/20, 50*time.Millisecond), 5*time.Second)
	return l.clock.Sleep(ctx, pause)
}

// write replaces the record st (or creates it) with this node as holder under the next
// fence, keeping the log's head and the saved state. It returns nil, nil when the condition
// failed.
func (l *Leaser) write(ctx context.Context, name string, st stored) (*Lease, []byte, error) {
	now := l.clock.Now()
	rec := st.rec
	rec.Name, rec.Holder, rec.Fence, rec.TTLMillis = name, l.cfg.Node, st.rec.Fence+1, l.cfg.TTL.Milliseconds()
	rec.AcquiredAt, rec.RenewedAt, rec.Released = now, now, false
	sent := l.clock.Mono()
	rev, raw, conflict, err := writeRecord(ctx, l.kv, &rec, st.rev)
	if err != nil || conflict {
		return nil, nil, err
	}
	h := newLease(l, name, rec, rev)
	h.wrote(sent)
	h.oldPointer = st.ptrRev
	return h, raw, nil
}
