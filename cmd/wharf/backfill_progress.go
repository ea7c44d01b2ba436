package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/internal/progress"
)

// bfProgress draws a backfill worker's progress on a terminal: splits done of the plan (as
// this worker knows them), records, bytes and the record rate.
type bfProgress struct {
	j   *backfill.Job
	bar *progress.Bar
}

// backfillProgress returns the bar of j on stderr when it is a terminal and output is for
// people, else one that draws nothing.
func (a *app) backfillProgress(j *backfill.Job) *bfProgress {
	b := &bfProgress{j: j}
	if a.quiet || a.format != "pretty" || !progress.IsTerminal(a.err) {
		return b
	}
	b.start(a.err, 0)
	return b
}

func (b *bfProgress) start(w io.Writer, width int, extra ...mpb.ContainerOption) {
	started := time.Now()
	info := decor.Any(func(decor.Statistics) string {
		st := b.j.Status()
		rate := float64(st.Records) / max(time.Since(started).Seconds(), 0.001)
		return fmt.Sprintf("%d/%d splits  %d records  %s  %.0f rec/s", st.Splits.Done+st.Splits.Quarantined,
			st.Splits.Planned, st.Records, humanSize(st.Bytes), rate)
	}, decor.WCSyncSpaceR)
	state := decor.Any(func(decor.Statistics) string {
		return strings.ToUpper(b.j.Status().State[:1]) + b.j.Status().State[1:]
	}, decor.WCSyncSpaceR)
	// The plan's size is only known later: each tick sets the total.
	b.bar = progress.Start(w, progress.Options{Width: width, Extra: extra, Prepend: []decor.Decorator{state, info},
		Every: func(bar *mpb.Bar, _ time.Duration) {
			st := b.j.Status()
			bar.SetTotal(int64(max(st.Splits.Planned, 1)), false)
			bar.SetCurrent(int64(st.Splits.Done + st.Splits.Quarantined))
		}})
}

// finish draws the last state.
func (b *bfProgress) finish(ok bool) {
	if ok {
		b.bar.Done(-1)
	} else {
		b.bar.Abort(false)
	}
}

// printReport writes a job's report for people.
func printReport(w io.Writer, r *backfill.JobReport) {
	fmt.Fprintf(w, "job %s: %s (%s)\n", r.Job, r.State, r.Coordinator)
	if r.Plan != nil {
		fmt.Fprintf(w, "plan %s (generation %d): %d splits, %d objects, %s; planned %s by %s\n", shortID(r.Plan.ID), r.Generation,
			r.Plan.Splits, r.Plan.Objects, humanSize(r.Plan.Bytes), r.Plan.PlannedAt.Format(time.RFC3339), r.Plan.PlannedBy)
	}
	fmt.Fprintf(w, "splits: %d pending, %d leased, %d done, %d quarantined (done but for quarantined objects); %d records committed\n",
		r.Splits[backfill.StatusPending], r.Splits[backfill.StatusLeased], r.Splits[backfill.StatusDone],
		r.Splits[backfill.StatusQuarantined], r.Records)
	if r.Leader != "" {
		fmt.Fprintf(w, "leader: %s\n", r.Leader)
	}
	for _, h := range r.Holders {
		fmt.Fprintf(w, "  %s holds split %s (%d records committed, %s)\n", h.Node, shortID(h.Split), h.Records, h.Updated.Format(time.RFC3339))
	}
	for _, q := range r.Quarantine {
		fmt.Fprintf(w, "  split %s, its other members delivered, quarantined:\n", shortID(q.Split))
		for _, o := range q.Objects {
			fmt.Fprintf(w, "    %s: %s after %d attempt(s): %s\n", o.Key, o.Reason, o.Attempts, o.Message)
		}
		fmt.Fprintf(w, "    attempts:\n")
		for _, f := range q.Failures {
			fmt.Fprintf(w, "      %d on %s: %s: %s: %s\n", f.Attempt, f.Node, f.Key, f.Reason, f.Message)
		}
	}
}
