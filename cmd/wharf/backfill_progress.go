package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/internal/progress"
	"github.com/wharfdata/wharf/internal/textfmt"
)

// backfillBar draws a backfill worker's progress on stderr when it is a terminal and output
// is for people (else nothing): its state, splits done of the plan (as this worker knows
// them; the plan's size is known only later), records, bytes and the record rate.
func (a *app) backfillBar(j *backfill.Job) *progress.Bar {
	if !a.drawsBars() {
		return nil
	}
	return progress.StartFigures(a.err, 0, false, func(elapsed time.Duration) progress.Figures {
		st := j.Status()
		done := st.Splits.Done + st.Splits.Quarantined
		rate := float64(st.Records) / max(elapsed.Seconds(), 0.001)
		return progress.Figures{Label: strings.ToUpper(st.State[:1]) + st.State[1:], Done: int64(done), Total: int64(st.Splits.Planned),
			Text: fmt.Sprintf("%d/%d splits  %d records  %s  %.0f rec/s", done, st.Splits.Planned, st.Records, textfmt.Size(st.Bytes), rate)}
	})
}
