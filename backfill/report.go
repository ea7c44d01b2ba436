package backfill

import (
	"context"

	"fmt"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/wharfdata/wharf/errcode"
)

// JobReport is a job as its coordinator records it, for `wharf backfill status` on any
// machine: the plan, the splits by state, who holds which, and what was quarantined.
type JobReport struct {
	Job         string         `json:"job"`
	Coordinator string         `json:"coordinator"`
	State       string         `json:"state"` // running, succeeded, failed
	Plan        *Plan          `json:"plan"`
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
	Exit: errcode.ExitFailed, Standing: true, Section: section,
	Meaning: "`wharf backfill status` found no job of that name in the coordinator (it was never planned there, or the wrong coordinator or source was given).",
	Remedy:  "Check `--job`, `--coordinator` and, for the bucket coordinator, the source URL (its bucket holds the job)."})

// Report reads job's records from c.
func Report(ctx context.Context, c Coordinator, job string) (*JobReport, error) {
	var cur Current
	_, found, err := getJSON(ctx, c, keyCurrent, &cur)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errcode.E("status", fmt.Sprintf("job %s in %s", job, c.Describe()), ErrNoJob, nil)
	}
	j := &Job{coord: c, cfg: Config{Job: job}}
	if err := j.load(ctx, cur.Plan); err != nil {
		return nil, err
	}
	r := &JobReport{Job: job, Coordinator: c.Describe(), State: cur.State, Plan: j.plan, FinishedAt: cur.FinishedAt,
		Splits:  map[string]int{StatusPending: 0, StatusLeased: 0, StatusDone: 0, StatusQuarantined: 0},
		Holders: []Holding{}, Quarantine: []Quarantine{}}
	var lr leaderRec
	if _, found, err := getJSON(ctx, c, keyLeader, &lr); err == nil && found && !lr.Released {
		r.Leader = lr.Node
	}
	states := make([]SplitState, len(j.ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i, id := range j.ids {
		g.Go(func() error {
			_, found, err := getJSON(gctx, c, keyState(id), &states[i])
			if err == nil && !found {
				states[i].Status = StatusPending
			}
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
			r.Holders = append(r.Holders, Holding{Node: st.Owner, Split: j.ids[i], Records: st.Watermark.Records, Updated: st.Updated})
		case StatusQuarantined:
			r.Quarantine = append(r.Quarantine, Quarantine{Split: j.ids[i], Objects: st.quarantinedObjects(), Failures: st.Failures})
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
