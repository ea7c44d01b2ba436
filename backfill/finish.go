package backfill

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/lease"
)

// finish ends the job once every split is final: the leader finishes the sink and records
// the job's end; the others wait for that record (taking over the leader lease if the
// leader stops).
func (j *Job) finish(ctx context.Context) error {
	for {
		cur, err := j.current(ctx)
		if err != nil {
			return err
		}
		if done, err := j.ended(cur); done {
			return err
		}
		h, err := j.leases.Acquire(ctx, leaderLease)
		switch {
		case errors.Is(err, lease.ErrHeld):
		case err != nil:
			return err
		default:
			err := j.finishAsLeader(ctx, h)
			if !errors.Is(err, errNotFinal) && !errors.Is(err, ErrLeaseLost) {
				return err
			}
			j.log.Warn("finishing the job as its leader did not end it: trying again", "error", err)
		}
		if err := j.sleep(ctx, j.cfg.PollInterval); err != nil {
			return err
		}
	}
}

// ended reports whether cur says how this worker's plan ended, and how: nil when it
// succeeded, ErrQuarantined naming what was quarantined, errSuperseded when cur is a later
// plan than this worker's.
func (j *Job) ended(cur *Current) (bool, error) {
	switch {
	case cur == nil:
		return true, coordErr(j.coord, "get", lease.LeaseKey(leaderLease), errors.New("the job's current plan is gone (its records deleted by hand?)"))
	case cur.Plan != j.plan.ID || cur.Generation != j.gen:
		return !brokenPlan, errSuperseded
	case cur.State == JobRunning:
		return false, nil
	case cur.State == JobSucceeded:
		return true, nil
	}
	return true, quarantineErr(j.cfg.Job, cur.Quarantine, j.plan.Splits)
}

// errNotFinal: a split of the plan is not final after all (work goes on).
var errNotFinal = errors.New("a split of the plan is not final")

// finishAsLeader finishes the sink and records the job's end, holding the leader lease h.
// The manifest is written only by the holder of the leader lease for the plan it certifies:
// the record h replaced must name this worker's plan, still running (read in the
// acquisition's own request, so no other plan can be current while h is held); the lease is
// renewed just before the manifest is written, and the write runs in a context that ends
// when the lease is lost or its deadline passes. The end is then recorded by the release, in
// the same fenced write.
func (j *Job) finishAsLeader(ctx context.Context, h *lease.Lease) error {
	defer func() { _ = h.Release(context.WithoutCancel(ctx)) }()
	cur, err := currentOf(h.State())
	if err != nil {
		return coordErr(j.coord, "decode", lease.LeaseKey(leaderLease), err)
	}
	if done, err := j.ended(cur); done {
		return err // another leader ended it, or the job was planned again
	}
	j.setLeader(true)
	defer j.setLeader(false)
	return holding(ctx, h, "the leader lease", func(ctx context.Context) error {
		f, q, err := j.finishing(ctx)
		if err != nil {
			return err
		}
		if err := h.Renew(ctx); err != nil {
			return leaseLost("finish", "the leader lease", err)
		}
		if err := j.sink.Finish(ctx, f); err != nil {
			return err
		}
		if brokenPlan && (cur == nil || cur.Plan != j.plan.ID) {
			return f.Error // the manifest is written; the end of another plan is not recorded
		}
		end := *cur
		end.State, end.FinishedAt, end.Quarantine = JobSucceeded, f.Finished, q
		if f.Error != nil {
			end.State, end.Error = JobFailed, f.Error.Error()
		}
		if err := h.ReleaseWith(ctx, end); err != nil {
			return leaseLost("finish", "the leader lease", err)
		}
		j.log.Info("job finished", "state", end.State, "splits", j.plan.Splits, "quarantined", len(q))
		return f.Error
	})
}

// finishing reads every split of the plan, final each one (errNotFinal otherwise), into what
// the sink learns at the end.
func (j *Job) finishing(ctx context.Context) (*Finish, []Quarantine, error) {
	splits, states, err := j.readAll(ctx)
	if err != nil {
		return nil, nil, err
	}
	var q []Quarantine
	var last time.Time
	for i, st := range states {
		switch st.Status {
		case StatusQuarantined:
			q = append(q, Quarantine{Split: splits[i].ID, Objects: st.quarantinedObjects(), Failures: st.Failures})
		case StatusDone:
		default:
			return nil, nil, errNotFinal
		}
		if st.Finished.After(last) {
			last = st.Finished
		}
	}
	if last.IsZero() {
		last = j.plan.PlannedAt
	}
	f := &Finish{Plan: j.plan, Splits: splits, States: states, Finished: last}
	if len(q) > 0 {
		f.Error = quarantineErr(j.cfg.Job, q, len(splits))
	}
	return f, q, nil
}

// readAll reads every split's descriptor and state, in plan order.
func (j *Job) readAll(ctx context.Context) ([]*Split, []*SplitState, error) {
	splits := make([]*Split, len(j.ids))
	states := make([]*SplitState, len(j.ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i, id := range j.ids {
		g.Go(func() error {
			sp, err := j.descriptor(gctx, id)
			if err != nil {
				return err
			}
			st, err := readSplit(gctx, j.coord, id)
			if err != nil {
				return err
			}
			splits[i], states[i] = sp, &st
			return nil
		})
	}
	return splits, states, g.Wait()
}

// quarantineErr is ErrQuarantined naming every quarantined object and its reason (the first
// ones; `wharf backfill status` lists all).
func quarantineErr(job string, q []Quarantine, total int) error {
	var b strings.Builder
	objects, named := 0, 0
	for _, s := range q {
		bad := s.Objects
		if len(bad) == 0 { // a record of an older wharf, which quarantined whole splits
			bad = objectsOf(s.Failures)
		}
		objects += len(bad)
		for _, o := range bad {
			if named++; named > maxNamed {
				continue
			}
			if named > 1 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s (%s: %s) in split %s", o.Key, o.Reason, firstLine(o.Message), short(s.Split))
		}
	}
	if named > maxNamed {
		fmt.Fprintf(&b, "; and %d more object(s): wharf backfill status lists them", named-maxNamed)
	}
	what := fmt.Sprintf("job %s: %d object(s) quarantined, in %d split(s)", job, objects, len(q))
	if total > 0 {
		what = fmt.Sprintf("job %s: %d object(s) quarantined, in %d of %d split(s)", job, objects, len(q), total)
	}
	return errcode.E("backfill", what, ErrQuarantined, errors.New(b.String()))
}

// maxNamed is how many quarantined objects an error names.
const maxNamed = 20

// objectsOf names the objects of failures, once each.
func objectsOf(failures []Failure) []BadObject {
	var out []BadObject
	seen := map[string]bool{}
	for _, f := range failures {
		if !seen[f.Key] {
			seen[f.Key] = true
			out = append(out, BadObject{Member: -1, Key: f.Key, Reason: f.Reason, Message: f.Message})
		}
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
