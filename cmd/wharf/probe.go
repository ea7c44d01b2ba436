package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

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
	return res.WriteText(a.out)
}

// asTyped is how a report for people names a store: a local path as the user typed it
// (./examples/data reads the same on every machine), anything else by its full URL.
func asTyped(raw, location string) string {
	if raw == "-" || strings.Contains(raw, "://") {
		return location
	}
	return raw
}
