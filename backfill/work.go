package backfill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wharfdata/wharf/lease"
)

// work leases and reads splits, up to max_in_flight at once, until every split of the plan
// is known to be done or quarantined. The first fatal error stops it.
func (j *Job) work(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, j.cfg.MaxInFlight)
	var wg sync.WaitGroup
	defer wg.Wait()
	cursor := int(PlanID([]string{j.cfg.Node})[0]) * len(j.ids) / 256 // workers start apart
	for ctx.Err() == nil {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		l, next, err := j.claim(ctx, cursor)
		if err != nil {
			cancel(err)
			break
		}
		cursor = next
		if l == nil {
			<-sem
			if j.allFinal() {
				break
			}
			if err := j.sleep(ctx, j.cfg.PollInterval); err != nil {
				break
			}
			continue
		}
		wg.Go(func() {
			defer func() { <-sem; j.poke() }()
			if err := j.process(ctx, l); err != nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// claim leases the first split from cursor on that is pending, handed back, or held by a
// worker that stopped renewing it for the lease TTL and its skew bound. It returns nil when
// none is, and the cursor to start from next time.
func (j *Job) claim(ctx context.Context, cursor int) (*splitLease, int, error) {
	n := len(j.ids)
	for i := range n {
		idx := (cursor + i) % n
		id := j.ids[idx]
		if j.known(id) {
			continue
		}
		l, err := j.tryLease(ctx, id)
		if err != nil || l != nil {
			return l, idx + 1, err
		}
	}
	return nil, cursor, nil
}

// tryLease leases split id if it can be taken now, in one read of its lease record (and the
// write that takes it): a split done or quarantined is noted final and not taken; one that a
// later plan wrote means this worker's plan is superseded (errSuperseded).
func (j *Job) tryLease(ctx context.Context, id string) (*splitLease, error) {
	var st SplitState
	h, err := j.leases.AcquireIf(ctx, splitLeaseName(id), func(raw json.RawMessage) error {
		var err error
		if st, err = splitStateOf(lease.Record{State: raw}, false); err != nil {
			return coordErr(j.coord, "decode", lease.LeaseKey(splitLeaseName(id)), err)
		}
		switch {
		case st.Generation > j.gen && !brokenPlan:
			return errSuperseded
		case st.final():
			return errFinal
		}
		return nil
	})
	switch {
	case errors.Is(err, errFinal):
		j.setFinal(id, st.Status)
		return nil, nil
	case errors.Is(err, lease.ErrHeld):
		return nil, nil
	case err != nil:
		return nil, err
	}
	st.Status, st.Owner, st.Fence = StatusLeased, j.cfg.Node, h.Fence()
	return &splitLease{j: j, id: id, h: h, st: st}, nil
}

// process reads a leased split into the sink, leaving out its quarantined objects, and
// commits it done (quarantined, when it has such objects); a bad object hands it back. It
// returns only fatal errors, after handing the split back.
func (j *Job) process(ctx context.Context, l *splitLease) error {
	desc, err := j.descriptor(ctx, l.id)
	if err != nil {
		l.release(context.WithoutCancel(ctx))
		return err
	}
	sp := desc.without(l.st.quarantined())
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	j.startFlight(sp, l.st.Watermark)
	defer j.endFlight(sp.ID)
	keep := make(chan struct{})
	defer func() { cancel(nil); <-keep }()
	go func() { defer close(keep); l.keep(ctx, cancel) }()
	from := l.st.Watermark
	part, end, err := j.deliver(ctx, sp, l)
	status := StatusDone
	if len(sp.Quarantined) > 0 {
		status = StatusQuarantined
	}
	if err == nil {
		err = l.done(ctx, status, part, end)
	}
	cancel(nil)
	var oe *ObjectError
	switch {
	case err == nil:
		j.m.splitDone(sp, end.Records-from.Records)
		j.setFinal(sp.ID, status)
		if status == StatusQuarantined {
			j.m.quarantined.Inc()
			j.log.Error("split done but for its quarantined objects", "split", short(sp.ID), "quarantined", len(sp.Quarantined), "delivered", sp.Left())
		}
		return nil
	case errors.As(err, &oe):
		return l.fail(context.WithoutCancel(ctx), sp, oe)
	case errors.Is(err, ErrLeaseLost) || errors.Is(context.Cause(ctx), ErrLeaseLost):
		j.m.leaseLost.Inc()
		j.log.Warn("split taken over by another worker; it resumes there from the last commit", "split", short(sp.ID))
		return nil
	}
	l.release(context.WithoutCancel(ctx))
	return err
}

// release hands the split back as its last commit left it (this worker stops: a fatal error,
// a cancellation), so that another worker resumes it from its watermark at once rather than
// after the TTL.
func (l *splitLease) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = l.h.Release(ctx)
}

// deliver reads the split into a writer of the sink.
func (j *Job) deliver(ctx context.Context, sp *Split, l *splitLease) (*PartInfo, Watermark, error) {
	w, from, err := j.sink.Open(ctx, sp, l.st.Watermark, l.ack)
	if err != nil {
		return nil, Watermark{}, err
	}
	end := from
	err = j.rd.readSplit(ctx, sp, from, func(b *Batch) error {
		j.progress(sp.ID, b)
		end = b.End
		return w.Write(ctx, b)
	})
	var part *PartInfo
	if err == nil {
		part, err = w.Close(ctx)
	}
	if err != nil {
		w.Abort(ctx)
	}
	return part, end, err
}

// splitLease is this worker's hold on one split: its lease (split-<id>), whose state is the
// split's. Every commit is a save of the state in the lease record, a write fenced by the
// lease, so once another worker took the split over, nothing this one does can commit.
type splitLease struct {
	j  *Job
	id string
	h  *lease.Lease

	mu sync.Mutex
	st SplitState
}

// saved is st as the lease record keeps it, by this worker of its plan.
func (l *splitLease) saved(st SplitState) SplitState {
	st.Owner, st.Fence, st.Generation, st.Updated = "", 0, l.j.gen, l.j.now().UTC()
	if !st.final() {
		st.Status = StatusPending // while it is leased, the lease says so
	}
	return st
}

// write changes the state by mutate and saves it (release: releasing the lease in the same
// write), fenced by the lease.
func (l *splitLease) write(ctx context.Context, op string, release bool, mutate func(*SplitState)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.st
	st.Failures, st.Bad = slices.Clone(st.Failures), slices.Clone(st.Bad)
	mutate(&st)
	st = l.saved(st)
	var err error
	if release {
		err = l.h.ReleaseWith(ctx, st)
	} else {
		err = l.h.Save(ctx, st)
	}
	if err != nil {
		return leaseLost(op, "split "+short(l.id), err)
	}
	l.st = st
	return nil
}

// ack commits the watermark wm (the sink acknowledged every record before it).
func (l *splitLease) ack(ctx context.Context, wm Watermark) error {
	err := l.write(ctx, "commit", false, func(st *SplitState) { st.Watermark = wm })
	if err == nil {
		l.j.m.commits.Inc()
	}
	return err
}

// done commits the split done, or quarantined when it left out quarantined objects, and
// releases its lease, in one write.
func (l *splitLease) done(ctx context.Context, status string, part *PartInfo, end Watermark) error {
	return l.write(ctx, "commit", true, func(st *SplitState) {
		st.Status, st.Part, st.Watermark, st.Finished = status, part, end, l.j.now().UTC()
	})
}

// fail hands the split back after a bad object, counting the failure against that object:
// one that failed max_attempts times is quarantined, and the split's next attempt delivers
// its other members without it.
func (l *splitLease) fail(ctx context.Context, sp *Split, oe *ObjectError) error {
	j := l.j
	j.m.objectFailed(oe.Reason)
	member := slices.IndexFunc(sp.Members, func(m Member) bool { return m.Key == oe.Key })
	if member < 0 {
		return fmt.Errorf("backfill: %w: object %q is no member of its split", oe, oe.Key)
	}
	var bad BadObject
	err := l.write(ctx, "hand back", true, func(st *SplitState) {
		st.Attempts++
		st.Failures = append(st.Failures, Failure{Attempt: st.Attempts, Node: j.cfg.Node, Key: oe.Key,
			Reason: oe.Reason, Message: oe.Err.Error(), Time: j.now().UTC()})
		if len(st.Failures) > maxFailures {
			st.Failures = st.Failures[len(st.Failures)-maxFailures:]
		}
		i := slices.IndexFunc(st.Bad, func(b BadObject) bool { return b.Member == member })
		if i < 0 {
			st.Bad = append(st.Bad, BadObject{Member: member, Key: oe.Key})
			i = len(st.Bad) - 1
		}
		b := &st.Bad[i]
		b.Attempts++
		b.Reason, b.Message = oe.Reason, firstLine(oe.Err.Error())
		b.Quarantined = b.Attempts >= j.cfg.MaxAttempts
		st.Status, bad = StatusPending, *b
	})
	j.noteError(oe)
	if errors.Is(err, ErrLeaseLost) {
		return nil
	}
	if err != nil {
		return err
	}
	if bad.Quarantined {
		j.m.objectsQuarantined.Inc()
		j.log.Error("object quarantined; its split goes on without it", "split", short(l.id), "attempts", bad.Attempts, "key", oe.Key, "reason", oe.Reason, "error", oe.Err)
	} else {
		j.log.Warn("split handed back", "split", short(l.id), "attempt", bad.Attempts, "key", oe.Key, "reason", oe.Reason, "error", oe.Err)
	}
	return nil
}

// keep renews the split's lease (Keep: TTL/3 after its last commit) until ctx ends; a lost
// lease (taken over, or past this holder's deadline) cancels the split with ErrLeaseLost.
func (l *splitLease) keep(ctx context.Context, cancel context.CancelCauseFunc) {
	go l.h.Keep(ctx)
	select {
	case <-l.h.Lost():
		if err := l.h.Err(); err != nil {
			cancel(leaseLost("renew", "split "+short(l.id), err))
		}
	case <-ctx.Done():
	}
}
