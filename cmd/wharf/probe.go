package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

func (a *app) probeCommand() *cobra.Command {
	var writers, rounds int
	cmd := &cobra.Command{
		Use:   "probe URL",
		Short: "Prove what a store guarantees: conditional writes, metadata, listing, clock",
		Long: `Find out what a store really does, rather than what it claims. probe writes a
sentinel object under _wharf/probe/ below the URL, exercises it, deletes it, and
reports each capability with its verdict (yes, no, inconclusive) and the evidence:

  conditional_create    a second create-if-absent (If-None-Match) is refused
  conditional_replace   a stale If-Match put is refused and a current one replaces
  conditional_delete    a delete with a stale If-Match is refused (reported, not required)
  pinned_read           a read pinned to a stale ETag is refused (reported, not required)
  user_metadata         user metadata round-trips
  list_after_write      a fresh object is listed at once

The coordination mode is "cas" when conditional create and replace are proven: leases
and fenced commits are safe on this store. Otherwise it is "single-writer": only one
writer may use it. A 501, 403 or transport fault makes a capability inconclusive
(WHARF_PROBE_INCONCLUSIVE), never "yes". A local directory on a network mount is
single-writer without a sentinel. probe also measures the skew between the store's
clock and this machine's, and warns when it is over 5 minutes.

probe exits 0 whenever it ran, whatever it found; read the mode (or the JSON) to decide.
JSON output (--format json) is the probe result as one object.

With --contention N, probe instead races N concurrent writers on keys under
_wharf/probe/ for --rounds R rounds and checks the recorded history:

  one_winner_per_create      exactly one of N racing create-if-absent puts wins each round
  no_lost_update             N writers incrementing a counter under If-Match lose nothing
  stale_delete_refused       a delete with a superseded ETag fails (MinIO deletes anyway)
  reads_see_written_values   every read during the races returns a value some writer wrote

Each check passes or fails with its evidence and up to five violations. It exits 0 when
every check passed, 1 when one failed (or could not be shown).`,
		Example: `  wharf probe ./examples/data
  wharf probe s3://my-bucket/
  wharf probe --contention 8 --rounds 5 s3://my-bucket/
  wharf --endpoint http://127.0.0.1:9000 probe --format json s3://scratch | jq -r .coordination`,
		Args: args(1, 1, "one URL"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if cmd.Flags().Changed("contention") || cmd.Flags().Changed("rounds") {
				return a.probeContention(cmd.Context(), argv[0], writers, rounds)
			}
			return a.probe(cmd.Context(), argv[0])
		},
	}
	cmd.Flags().IntVar(&writers, "contention", 0, "race N concurrent writers on one key and check the history (N ≥ 2)")
	cmd.Flags().IntVar(&rounds, "rounds", 5, "rounds of each race, with --contention")
	return cmd
}

func (a *app) probe(ctx context.Context, raw string) error {
	s, err := a.openURL(ctx, raw)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := probe.Run(ctx, s, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	if err := a.verdicts().Record(res); err != nil {
		a.log.Warn("the verdict is not remembered", "err", err)
	}
	if a.format == "json" {
		return writeJSON(a.out, res)
	}
	res.Store.Location = asTyped(raw, res.Store.Location)
	return writeProbe(a.out, res)
}

// asTyped is how a report for people names a store: a local path as the user typed it
// (./examples/data reads the same on every machine), anything else by its full URL.
func asTyped(raw, location string) string {
	if raw == "-" || strings.Contains(raw, "://") {
		return location
	}
	return raw
}

// writeProbe writes a probe result for people: the store, the mode and why, a table of
// capabilities, and the clock skew.
func writeProbe(w io.Writer, r *probe.Result) error {
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
	for _, name := range capabilityOrder(r) {
		c := r.Capabilities[name]
		verdict := c.Verdict
		if c.Code != "" {
			verdict += " [" + c.Code + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, verdict, oneLine(c.Evidence))
	}
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// capabilityOrder lists the known capabilities in report order, then any others the result
// has, sorted.
func capabilityOrder(r *probe.Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range probe.Capabilities {
		if _, ok := r.Capabilities[c]; ok {
			out = append(out, c)
			seen[c] = true
		}
	}
	var rest []string
	for c := range r.Capabilities {
		if !seen[c] {
			rest = append(rest, c)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

func describe(d store.Description) string {
	s := d.Location
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
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
