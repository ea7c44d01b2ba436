package backfill

import (
	"context"
	"fmt"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/lease"
)

// JobReport is a job as its coordinator records it, for `wharf backfill status` on any
// machine: the plan, the splits by state, who holds which, and what was quarantined.
type JobReport struct {
	Job         string         `json:"job"`
	Coordinator string         `json:"coordinator"`
	State       string         `json:"state"` // running, succeeded, failed
	Plan        *Plan          `json:"plan"`
	Generation  int            `json:"generation"` // the plan's: 1, one more for each replan
	Leader      string         `json:"leader,omitempty"`
	Splits      map[string]int `json:"splits"`  // by status: pending, leased, done, quarantined
	Records     int64          `json:"records"` // committed (done splits and watermarks)
	Holders     []Holding      `json:"holders"`
	Quarantine  []Quarantine   `json:"quarantine"`
	FinishedAt  time.Time      `json:"finished_at,omitzero"`
}

// Holding is a split a worker holds.
type Holding struct {
	Node    string    `json:"node"`
	Split   string    `json:"split"`
	Records int64     `json:"records"` // committed so far
	Updated time.Time `json:"updated"`
}

// ErrNoJob: the coordinator has no such job.
var ErrNoJob = errcode.New(errcode.Def{Name: "WHARF_BACKFILL_JOB_NOT_FOUND", Text: "no such backfill job",
	Exit: errcode.ExitFailed, Class: errcode.Fatal, Standing: true, Section: section,
	Meaning: "`wharf backfill status` found no job of that name in the coordinator (it was never planned there, or the wrong coordinator or source was given).",
	Remedy:  "Check `--job`, `--coordinator` and, for the bucket coordinator, the source URL (its bucket holds the job)."})

// Report reads job's records from c: the leader lease's record (the current plan, and who
// leads), the plan, and every split's lease record. It reads only.
func Report(ctx context.Context, c *Coordinator, job string) (*JobReport, error) {
	rec, found, err := readLease(ctx, c, leaderLease)
	if err != nil {
		return nil, err
	}
	cur, err := currentOf(rec.State)
	if err != nil {
		return nil, coordErr(c, "decode", lease.LeaseKey(leaderLease), err)
	}
	if cur == nil {
		return nil, errcode.E("status", fmt.Sprintf("job %s in %s", job, c.Describe()), ErrNoJob, nil)
	}
	p, err := loadPlan(ctx, c, cur.Plan)
	if err != nil {
		return nil, err
	}
	r := &JobReport{Job: job, Coordinator: c.Describe(), State: cur.State, Plan: p, Generation: cur.Generation, FinishedAt: cur.FinishedAt,
		Splits:  map[string]int{StatusPending: 0, StatusLeased: 0, StatusDone: 0, StatusQuarantined: 0},
		Holders: []Holding{}, Quarantine: []Quarantine{}}
	if found && !rec.Released {
		r.Leader = rec.Holder
	}
	states := make([]SplitState, len(p.ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i, id := range p.ids {
		g.Go(func() (err error) {
			states[i], err = readSplit(gctx, c, id)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, st := range states {
		r.Splits[st.Status]++
		r.Records += st.Watermark.Records
		switch st.Status {
		case StatusLeased:
			r.Holders = append(r.Holders, Holding{Node: st.Owner, Split: p.ids[i], Records: st.Watermark.Records, Updated: st.Updated})
		case StatusQuarantined:
			r.Quarantine = append(r.Quarantine, Quarantine{Split: p.ids[i], Objects: st.quarantinedObjects(), Failures: st.Failures})
		}
	}
	sort.Slice(r.Holders, func(a, b int) bool { return r.Holders[a].Node < r.Holders[b].Node })
	return r, nil
}

// Err is the job's end as an error: nil unless it failed.
func (r *JobReport) Err() error {
	if r.State != JobFailed {
		return nil
	}
	return quarantineErr(r.Job, r.Quarantine, r.Plan.Splits)
}
