package spool

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/wharfdata/wharf/internal/textfmt"
)

// WriteText writes st for people, as `wharf spool status` shows it: the spool, its owner and
// oldest pending file, then a table of files and bytes by state.
func (st Status) WriteText(w io.Writer) error {
	r := textfmt.Rows{Width: 15}
	r.Row("spool", "%s", st.Dir)
	r.Row("epoch", "%s", st.Epoch)
	r.Row("created", "%s UTC", textfmt.Time(st.Created))
	if st.Replay != "" {
		r.Row("replay", "%s (ships only with --replay %s, under wharf/replays/%s/)", st.Replay, st.Replay, st.Replay)
	}
	r.Row("next sequence", "%d", st.Next)
	if st.Owner.Held {
		r.Row("owner", "PID %d (holds %s)", st.Owner.PID, st.Owner.Lock)
	} else {
		r.Row("owner", "none")
	}
	if o := st.Oldest; o != nil {
		r.Row("oldest pending", "%s, added %s UTC (%s ago)", o.Name, textfmt.Time(o.Added), st.OldestAge.Round(time.Second))
	} else {
		r.Row("oldest pending", "-")
	}
	r.Row("catalog", "%d records", st.Records)
	for _, warn := range st.Warnings {
		r.Row("warning", "%s", warn)
	}
	r.WriteString("\n")
	tw := tabwriter.NewWriter(&r, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tFILES\tBYTES")
	for _, s := range States {
		c := st.Files.Of(s)
		fmt.Fprintf(tw, "%s\t%d\t%s\n", s, c.Files, textfmt.Size(c.Bytes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := r.WriteTo(w)
	return err
}
