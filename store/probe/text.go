package probe

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/store"
)

// WriteText writes r for people, as `wharf probe` shows it: the store, the mode and why, a
// table of capabilities (known ones in report order, then any others sorted), and the clock
// skew.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "store:         %s\n", describe(r.Store))
	fmt.Fprintf(&b, "coordination:  %s\n", r.Coordination)
	if r.Reason != "" {
		fmt.Fprintf(&b, "reason:        %s\n", r.Reason)
	}
	fmt.Fprintf(&b, "clock skew:    %+.1fs (store clock minus local clock)\n", r.ClockSkewSeconds)
	if r.ClockSkewWarning != "" {
		fmt.Fprintf(&b, "WARNING:       %s\n", r.ClockSkewWarning)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CAPABILITY\tVERDICT\tEVIDENCE")
	rest := slices.Sorted(func(yield func(string) bool) {
		for c := range r.Capabilities {
			if !slices.Contains(Capabilities, c) && !yield(c) {
				return
			}
		}
	})
	for _, name := range append(slices.Clone(Capabilities), rest...) {
		c, ok := r.Capabilities[name]
		if !ok {
			continue
		}
		verdict := c.Verdict
		if c.Code != "" {
			verdict += " [" + c.Code + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, verdict, textfmt.OneLine(c.Evidence))
	}
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// requiredChecks are the contention checks leases rely on. A stale conditional delete is
// reported but not required, as in the plain probe: wharf releases a lease by a conditional
// replace, never by a conditional delete.
var requiredChecks = []string{CheckOneWinner, CheckNoLostUpdate, CheckReadsAreWrites}

// SafeForLeases reports whether every check leases rely on passed.
func (r *ContentionResult) SafeForLeases() bool {
	for _, c := range requiredChecks {
		if r.Checks[c].Verdict != Pass {
			return false
		}
	}
	return true
}

// WriteText writes r for people, as `wharf probe --contention` shows it: the race, the
// verdict for leases, a table of checks, and the violations of any check that failed.
func (r *ContentionResult) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "store:     %s\n", describe(r.Store))
	fmt.Fprintf(&b, "race:      %d writers, %d rounds, %d requests (%d failed without showing a condition) in %.1fs\n",
		r.Writers, r.Rounds, r.Requests, r.Errors, r.Duration.Seconds())
	verdict := "PASS: safe for leases and fenced commits under contention"
	switch {
	case !r.SafeForLeases():
		verdict = "FAIL: do not trust this store with leases"
	case !r.Passed:
		verdict += " (a stale conditional delete was not refused: reported, not required)"
	}
	fmt.Fprintf(&b, "verdict:   %s\n\n", verdict)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tVERDICT\tEVIDENCE")
	for _, name := range ContentionChecks {
		if c, ok := r.Checks[name]; ok {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", name, c.Verdict, textfmt.OneLine(c.Evidence))
		}
	}
	tw.Flush()
	for _, name := range ContentionChecks {
		for _, ex := range r.Checks[name].Examples {
			fmt.Fprintf(&b, "  %s: %s\n", name, ex)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// describe names a store for people: its location, then its scheme, endpoint and mount type.
func describe(d store.Description) string {
	var extra []string
	if d.Scheme != "" {
		extra = append(extra, d.Scheme)
	}
	if d.Endpoint != "" {
		extra = append(extra, "endpoint "+d.Endpoint)
	}
	if d.MountType != "" {
		extra = append(extra, "mount "+d.MountType)
	}
	if len(extra) == 0 {
		return d.Location
	}
	return d.Location + " (" + strings.Join(extra, ", ") + ")"
}
