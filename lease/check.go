package lease

import (
	"context"
	"errors"
	"sync"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// CheckEvery is how often an acquisition checks that the store still enforces conditional
// writes: the CheckEvery-th acquisition by a Leaser (counted across every process of this
// machine that trusts the same remembered verdict, when the Leaser has Options.Verdicts)
// replaces the lease record once more, at the revision its own acquisition just replaced.
// A store that enforces conditions refuses that write (one request, no read-back); one that
// accepts it fails the acquisition with ErrCoordinationUnproven, and its remembered verdict is
// forgotten. So a store proven cas that stops enforcing conditions is found within CheckEvery
// acquisitions of each machine, at one request in CheckEvery acquisitions. A remembered
// verdict whose count cannot be written is checked at every acquisition that trusts it.
const CheckEvery = 8

// checker counts acquisitions and keeps what a check found.
type checker struct {
	every int

	mu      sync.Mutex
	n       int
	refused error // once the store is found not to enforce conditions, every acquisition fails

	verdicts *probe.Verdicts // the count is kept there, with the verdict, when set
	desc     store.Description
}

// due counts an acquisition and reports whether it must check.
func (c *checker) due() bool {
	if c.every < 0 {
		return false
	}
	if c.verdicts != nil {
		if due, ok := c.verdicts.Count(c.desc, c.every); ok {
			return due
		}
		if e, ok := c.verdicts.Lookup(c.desc); ok && e.Coordination == probe.CAS {
			// Trusted, but the count cannot be kept beside it (a file this process cannot
			// write): a process that acquires once would never reach CheckEvery by itself.
			return true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n >= c.every
}

func (c *checker) passed() {
	c.mu.Lock()
	c.n = 0
	c.mu.Unlock()
	if c.verdicts != nil {
		c.verdicts.Checked(c.desc)
	}
}

func (c *checker) refuse(err error) {
	c.mu.Lock()
	c.refused = err
	c.mu.Unlock()
	if c.verdicts != nil {
		_ = c.verdicts.Forget(c.desc)
	}
}

func (c *checker) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused
}

// verify runs the check when this acquisition is due one: h's record written as raw, at the
// revision replaced that the acquisition replaced ("" when it created the record: nothing to
// check against, and the next acquisition checks instead).
func (l *Leaser) verify(ctx context.Context, h *Lease, replaced string, raw []byte) error {
	if !l.check.due() || replaced == "" {
		return nil
	}
	bctx, done, err := h.bound(ctx)
	if err != nil {
		return err
	}
	defer done()
	_, err = l.kv.Update(bctx, LeaseKey(h.name), raw, replaced)
	switch {
	case errors.Is(err, cas.ErrConflict):
		l.check.passed()
		return nil
	case err != nil:
		return h.deadlineErr(bctx, ctx, err)
	}
	refused := fail("acquire", h.name, ErrCoordinationUnproven,
		"the store accepted a replace of the lease record at a revision that had already been replaced: it no longer enforces "+
			"conditional writes, and no lease on it excludes anyone (the remembered probe verdict is forgotten; `wharf probe` shows what it does now)")
	l.check.refuse(refused)
	l.log.Error("lease: the store no longer enforces conditional writes", "lease", h.name, "store", l.kv.Describe())
	return refused
}
