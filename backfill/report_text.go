package backfill

import (
	"fmt"
	"io"
	"time"

	"github.com/wharfdata/wharf/internal/textfmt"
)

// WriteText writes r for people, as `wharf backfill status` shows it: the job, its plan, its
// splits by state, who holds which, and each quarantined object with every attempt at it.
func (r *JobReport) WriteText(w io.Writer) error {
	var b textfmt.Rows
	fmt.Fprintf(&b, "job %s: %s (%s)\n", r.Job, r.State, r.Coordinator)
	if r.Plan != nil {
		fmt.Fprintf(&b, "plan %s (generation %d): %d splits, %d objects, %s; planned %s by %s\n", ShortID(r.Plan.ID), r.Generation,
			r.Plan.Splits, r.Plan.Objects, textfmt.Size(r.Plan.Bytes), r.Plan.PlannedAt.Format(time.RFC3339), r.Plan.PlannedBy)
	}
	fmt.Fprintf(&b, "splits: %d pending, %d leased, %d done, %d quarantined (done but for quarantined objects); %d records committed\n",
		r.Splits[StatusPending], r.Splits[StatusLeased], r.Splits[StatusDone], r.Splits[StatusQuarantined], r.Records)
	if r.Leader != "" {
		fmt.Fprintf(&b, "leader: %s\n", r.Leader)
	}
	for _, h := range r.Holders {
		fmt.Fprintf(&b, "  %s holds split %s (%d records committed, %s)\n", h.Node, ShortID(h.Split), h.Records, h.Updated.Format(time.RFC3339))
	}
	for _, q := range r.Quarantine {
		fmt.Fprintf(&b, "  split %s, its other members delivered, quarantined:\n", ShortID(q.Split))
		for _, o := range q.Objects {
			fmt.Fprintf(&b, "    %s: %s after %d attempt(s): %s\n", o.Key, o.Reason, o.Attempts, o.Message)
		}
		fmt.Fprintf(&b, "    attempts:\n")
		for _, f := range q.Failures {
			fmt.Fprintf(&b, "      %d on %s: %s: %s: %s\n", f.Attempt, f.Node, f.Key, f.Reason, f.Message)
		}
	}
	_, err := b.WriteTo(w)
	return err
}

// ShortID is how a report for people names a plan or a split: its id's first 12 characters.
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
