package backfill

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/wharfdata/wharf/errcode"
)

// finish ends the job once every split is final: the leader finishes the sink and records
// the job's end; the others wait for that record (taking over the leadership if the leader
// stops).
func (j *Job) finish(ctx context.Context) error {
	for {
		var cur Current
		_, _, err := getJSON(ctx, j.coord, keyCurrent, &cur)
		if err != nil {
			return err
		}
		if cur.Plan == j.plan.ID && cur.State != JobRunning {
			if cur.State == JobSucceeded {
				return nil
			}
			return quarantineErr(j.cfg.Job, cur.Quarantine, j.plan.Splits)
		}
		ok, err := j.lead.try(ctx)
		if err != nil {
			return err
		}
		if ok {
			var result error
			err := j.holding(ctx, func(ctx context.Context) error {
				result = j.finishAsLeader(ctx)
				return nil
			})
			if err != nil {
				return err
			}
			if result == nil || errors.Is(result, ErrQuarantined) {
				return result
			}
			if !errors.Is(result, ErrConflict) {
				return result
			}
		}
		if err := j.sleep(ctx, j.cfg.PollInterval); err != nil {
			return err
		}
	}
}

// finishAsLeader reads every split's record, finishes the sink and records the end.
func (j *Job) finishAsLeader(ctx context.Context) error {
	splits, states, err := j.readAll(ctx)
	if err != nil {
		return err
	}
	var q []Quarantine
	var last time.Time
	for i, st := range states {
		switch st.Status {
		case StatusQuarantined:
			q = append(q, Quarantine{Split: splits[i].ID, Objects: st.quarantinedObjects(), Failures: st.Failures})
		case StatusDone:
		default:
			return ErrConflict // not final after all: work goes on
		}
		if st.Finished.After(last) {
			last = st.Finished
		}
	}
	if last.IsZero() {
		last = j.plan.PlannedAt
	}
	var jobErr error
	if len(q) > 0 {
		jobErr = quarantineErr(j.cfg.Job, q, len(splits))
	}
	if err := j.sink.Finish(ctx, &Finish{Plan: j.plan, Splits: splits, States: states, Error: jobErr, Finished: last}); err != nil {
		return err
	}
	return j.recordEnd(ctx, q, jobErr, last)
}

// recordEnd marks the current plan succeeded or failed.
func (j *Job) recordEnd(ctx context.Context, q []Quarantine, jobErr error, last time.Time) error {
	var cur Current
	rev, _, err := getJSON(ctx, j.coord, keyCurrent, &cur)
	if err != nil {
		return err
	}
	if cur.Plan != j.plan.ID {
		return jobErr
	}
	cur.State, cur.FinishedAt, cur.Quarantine = JobSucceeded, last, q
	if jobErr != nil {
		cur.State, cur.Error = JobFailed, jobErr.Error()
	}
	if _, err := putJSON(ctx, j.coord, keyCurrent, cur, rev); err != nil {
		return err
	}
	j.log.Info("job finished", "state", cur.State, "splits", j.plan.Splits, "quarantined", len(q))
	return jobErr
}

// readAll reads every split's descriptor and record, in plan order.
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
			var st SplitState
			if _, found, err := getJSON(gctx, j.coord, keyState(id), &st); err != nil {
				return err
			} else if !found {
				st.Status = StatusPending
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
