package backfill

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wharfdata/wharf/errcode"
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
// worker that stopped renewing it for the lease TTL. It returns nil when none is, and the
// cursor to start from next time.
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

// tryLease leases split id if it can be taken now.
func (j *Job) tryLease(ctx context.Context, id string) (*splitLease, error) {
	var st SplitState
	rev, found, err := getJSON(ctx, j.coord, keyState(id), &st)
	if err != nil {
		return nil, err
	}
	switch {
	case !found:
		st = SplitState{Status: StatusPending}
	case st.final():
		j.setFinal(id, st.Status)
		return nil, nil
	case st.Status == StatusLeased && !j.obs.stale(keyState(id), rev, j.cfg.LeaseTTL):
		return nil, nil
	}
	if st.Status == StatusLeased {
		j.log.Info("taking over split", "split", short(id), "from", st.Owner, "watermark_records", st.Watermark.Records)
	}
	st.Status, st.Owner, st.Fence, st.Updated = StatusLeased, j.cfg.Node, st.Fence+1, j.now().UTC()
	newRev, err := putJSON(ctx, j.coord, keyState(id), st, rev)
	if errors.Is(err, ErrConflict) {
		return nil, nil // another worker got it first
	}
	if err != nil {
		return nil, err
	}
	j.obs.forget(keyState(id))
	return &splitLease{j: j, id: id, rev: newRev, st: st}, nil
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
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { l.heartbeat(ctx, cancel) })
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

// release hands the split back untouched (this worker stops: a fatal error, a cancellation),
// so that another worker resumes it from its watermark at once rather than after the TTL.
func (l *splitLease) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = l.write(ctx, "release", func(st *SplitState) { st.Status, st.Owner = StatusPending, "" })
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

// splitLease is this worker's hold on one split: every change of its record is a
// compare-and-set at the revision this worker last wrote, so once another worker took the
// split over, nothing this one does can commit.
type splitLease struct {
	j  *Job
	id string

	mu   sync.Mutex
	rev  string
	st   SplitState
	lost bool
}

// write changes the record by mutate, fenced.
func (l *splitLease) write(ctx context.Context, op string, mutate func(*SplitState)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost {
		return errcode.E(op, "split "+short(l.id), ErrLeaseLost, nil)
	}
	st := l.st
	st.Failures, st.Bad = slices.Clone(st.Failures), slices.Clone(st.Bad)
	mutate(&st)
	st.Updated = l.j.now().UTC()
	rev, err := putJSON(ctx, l.j.coord, keyState(l.id), st, l.rev)
	if errors.Is(err, ErrConflict) {
		l.lost = true
		return errcode.E(op, "split "+short(l.id), ErrLeaseLost, err)
	}
	if err != nil {
		return err
	}
	l.rev, l.st = rev, st
	return nil
}

// ack commits the watermark wm (the sink acknowledged every record before it).
func (l *splitLease) ack(ctx context.Context, wm Watermark) error {
	err := l.write(ctx, "commit", func(st *SplitState) { st.Watermark = wm })
	if err == nil {
		l.j.m.commits.Inc()
	}
	return err
}

// heartbeat renews the lease every TTL/3 until ctx ends; a lost lease cancels the split.
func (l *splitLease) heartbeat(ctx context.Context, cancel context.CancelCauseFunc) {
	t := time.NewTicker(l.j.cfg.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			err := l.write(ctx, "renew", func(st *SplitState) { st.Beat++ })
			if errors.Is(err, ErrLeaseLost) {
				cancel(err)
				return
			}
			if err != nil && ctx.Err() == nil {
				l.j.log.Warn("renewing a split's lease failed; trying again", "split", short(l.id), "error", err)
			}
		}
	}
}

// done commits the split done, or quarantined when it left out quarantined objects.
func (l *splitLease) done(ctx context.Context, status string, part *PartInfo, end Watermark) error {
	return l.write(ctx, "commit", func(st *SplitState) {
		st.Status, st.Owner, st.Part, st.Watermark, st.Finished = status, "", part, end, l.j.now().UTC()
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
	err := l.write(ctx, "hand back", func(st *SplitState) {
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
		st.Status, st.Owner, bad = StatusPending, "", *b
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
