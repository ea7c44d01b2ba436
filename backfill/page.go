package backfill

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/statuspage"
	"github.com/wharfdata/wharf/internal/textfmt"
)

// fleetEvery is how often the status page reads the job's records from the coordinator: the
// page of every worker shows the whole fleet, and a page reloaded every few seconds on each
// of many workers must not become the coordinator's main load.
const fleetEvery = 5 * time.Second

// fleetView caches the job's report (Report) for the status page.
type fleetView struct {
	mu  sync.Mutex
	at  time.Time
	r   *JobReport
	err error
}

// report returns the job's report, read again when the cached one is older than fleetEvery.
func (j *Job) report(ctx context.Context) (*JobReport, time.Time, error) {
	f := &j.fleet
	f.mu.Lock()
	defer f.mu.Unlock()
	if now := j.now(); f.at.IsZero() || now.Sub(f.at) >= fleetEvery {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		f.r, f.err = Report(ctx, j.coord, j.cfg.Job)
		cancel()
		f.at = now
	}
	return f.r, f.at, f.err
}

// page is the status page of this worker now: its own figures (Status), the job's as the
// coordinator records them (every worker, the splits by state, the quarantined objects with
// their reasons), the records it delivered over the last five minutes, its recent errors.
func (j *Job) page(ctx context.Context) statuspage.Page {
	st := j.Status()
	now := j.now()
	p := statuspage.Page{Component: "backfill", Name: st.Job, State: st.State, Health: "ok", Generated: now}
	if st.State == StateFailed {
		p.Health = "failed"
		if st.LastError != nil {
			p.Reason = fmt.Sprintf("%s [%s]", st.LastError.Message, st.LastError.Code)
		}
	}
	p.Sections = append(p.Sections, statuspage.Section{Title: "This worker", Facts: []statuspage.Fact{
		statuspage.F("node", "node", st.Node),
		statuspage.F("leader", "leads the job", textfmt.YesNo(st.Leader)),
		statuspage.F("records", "records delivered", st.Records),
		statuspage.F("splits_done_here", "splits it finished", st.Splits.DoneHere),
		statuspage.F("in_flight", "splits it reads now", len(st.InFlight)),
		statuspage.F("started", "started", textfmt.Time(st.Started)),
		statuspage.F("coordinator", "coordinator", st.Coordinator),
		statuspage.F("source", "source", st.Source),
		statuspage.F("sink", "sink", st.Sink),
	}})
	p.Sections = append(p.Sections, j.fleetSections(ctx, now)...)
	p.Chart = &statuspage.Chart{Title: "Records delivered by this worker", Unit: "records/s", Step: j.m.delivered.Step(), Rates: j.m.delivered.Rates(now)}
	for i := len(st.RecentErrors) - 1; i >= 0; i-- {
		e := st.RecentErrors[i]
		p.Errors = append(p.Errors, statuspage.Error{Time: e.Time, Code: e.Code, Message: e.Message, Remedy: errcode.Remedy(e.Code)})
	}
	return p
}

// fleetSections are the job as its coordinator records it: the plan and its splits by state,
// every worker holding a split, the quarantined objects.
func (j *Job) fleetSections(ctx context.Context, now time.Time) []statuspage.Section {
	r, at, err := j.report(ctx)
	if err != nil {
		note := "the coordinator could not be read: " + err.Error()
		if errors.Is(err, ErrNoJob) {
			note = "the job has no plan in the coordinator yet"
		} else if c := errcode.NameOf(err); c != "" && !strings.Contains(note, c) {
			note += " [" + c + "]"
		}
		return []statuspage.Section{{Title: "Job", Note: note}}
	}
	job := statuspage.Section{Title: "Job", Facts: []statuspage.Fact{
		statuspage.F("job_state", "state", r.State),
		statuspage.F("plan", "plan", short(r.Plan.ID)),
		statuspage.F("generation", "generation", r.Generation),
		statuspage.F("job_leader", "leader", textfmt.Dash(r.Leader)),
		statuspage.F("splits_planned", "splits planned", r.Plan.Splits),
		statuspage.F("splits_pending", "pending", r.Splits[StatusPending]),
		statuspage.F("splits_leased", "being read", r.Splits[StatusLeased]),
		statuspage.F("splits_done", "done", r.Splits[StatusDone]),
		statuspage.F("splits_quarantined", "quarantined", r.Splits[StatusQuarantined]),
		statuspage.F("objects", "objects", r.Plan.Objects),
		statuspage.F("bytes", "bytes", fmt.Sprintf("%d (%s)", r.Plan.Bytes, textfmt.Size(r.Plan.Bytes))),
		statuspage.F("job_records", "records committed", r.Records),
	}, Note: fmt.Sprintf("as the coordinator recorded it %s ago", now.Sub(at).Round(time.Second))}
	workers := &statuspage.Table{Key: "workers", Columns: []string{"node", "split", "records committed", "updated"},
		Empty: "no worker holds a split now"}
	for _, h := range r.Holders {
		workers.Rows = append(workers.Rows, []string{h.Node, short(h.Split), fmt.Sprint(h.Records), textfmt.Time(h.Updated)})
	}
	quarantine := &statuspage.Table{Key: "quarantine", Columns: []string{"key", "split", "code", "reason", "attempts", "error"},
		Empty: "nothing quarantined"}
	for _, q := range r.Quarantine {
		for _, o := range q.Objects {
			quarantine.Rows = append(quarantine.Rows, []string{o.Key, short(q.Split), ErrObject.Name(), o.Reason, fmt.Sprint(o.Attempts), o.Message})
		}
	}
	return []statuspage.Section{job,
		{Title: "Workers holding splits", Table: workers},
		{Title: "Quarantined objects", Table: quarantine}}
}
