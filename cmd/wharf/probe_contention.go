package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// errContentionFailed is the cause when a contention check did not pass.
var errContentionFailed = errors.New("the store failed a contention check")

func (a *app) probeContention(ctx context.Context, raw string, writers, rounds int) error {
	if writers < 2 || rounds < 1 {
		return usageErr(fmt.Errorf("probe: --contention %d --rounds %d: want at least 2 writers and 1 round", writers, rounds))
	}
	s, err := a.openURL(ctx, raw)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := probe.Contention(ctx, s, probe.ContentionOptions{Writers: writers, Rounds: rounds})
	if err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	safe := safeForLeases(res)
	if a.format == "json" {
		err = writeJSON(a.out, contentionJSON{res, safe, res.Duration.Seconds()})
	} else {
		res.Store.Location = asTyped(raw, res.Store.Location)
		err = writeContention(a.out, res, safe)
	}
	if err != nil {
		return err
	}
	if !safe {
		return &store.Error{Op: "probe", Key: raw, Kind: probe.ErrCoordinationUnproven, Err: errContentionFailed}
	}
	return nil
}

// requiredChecks are the contention checks leases rely on. A stale conditional delete is
// reported but not required, as in the plain probe: wharf releases a lease by a conditional
// replace, never by a conditional delete.
var requiredChecks = []string{probe.CheckOneWinner, probe.CheckNoLostUpdate, probe.CheckReadsAreWrites}

// safeForLeases reports whether every required check passed.
func safeForLeases(r *probe.ContentionResult) bool {
	for _, c := range requiredChecks {
		if r.Checks[c].Verdict != probe.Pass {
			return false
		}
	}
	return true
}

// contentionJSON adds the verdict and the duration in seconds to the result.
type contentionJSON struct {
	*probe.ContentionResult
	SafeForLeases bool    `json:"safe_for_leases"`
	Seconds       float64 `json:"seconds"`
}

// writeContention writes a contention result for people: the race, a table of checks, and
// the violations of any check that failed.
func writeContention(w io.Writer, r *probe.ContentionResult, safe bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "store:     %s\n", describe(r.Store))
	fmt.Fprintf(&b, "race:      %d writers, %d rounds, %d requests (%d failed without showing a condition) in %.1fs\n",
		r.Writers, r.Rounds, r.Requests, r.Errors, r.Duration.Seconds())
	verdict := "PASS: safe for leases and fenced commits under contention"
	switch {
	case !safe:
		verdict = "FAIL: do not trust this store with leases"
	case !r.Passed:
		verdict += " (a stale conditional delete was not refused: reported, not required)"
	}
	fmt.Fprintf(&b, "verdict:   %s\n\n", verdict)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tVERDICT\tEVIDENCE")
	for _, name := range probe.ContentionChecks {
		c, ok := r.Checks[name]
		if ok {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", name, c.Verdict, oneLine(c.Evidence))
		}
	}
	tw.Flush()
	for _, name := range probe.ContentionChecks {
		for _, ex := range r.Checks[name].Examples {
			fmt.Fprintf(&b, "  %s: %s\n", name, ex)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
