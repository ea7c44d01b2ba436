package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/reconcile"
)

func (a *app) reconcileCommand() *cobra.Command {
	var f validateFlags
	parallel, metrics := 2, ""
	cmd := &cobra.Command{
		Use:   "reconcile -c wharf.yaml [--export NAME] [--date YYYY-MM-DD] [--run-id R] [--prefix P]",
		Short: "Compare a certified export run with its source, chunk by chunk",
		Long: `Compare a certified run with the source it was exported from. The prefix is resolved as
validate resolves it (--date, default today UTC; --run-id, default for a {run_id}
destination the export's last run; or exactly --prefix, one export only). The run's
manifest must be certified, but for problems with single parts (a part deleted or
rewritten), whose chunks are then unknown.

For every chunk the source is queried once (--parallel chunks at once, default 2), with the
WHERE clause that read the chunk (its range of the chunk key and, for a delta run, the run's
cursor window): COUNT(*) and, for every column, its non-null count and, for a column whose
order compares exactly with Parquet's (integers, floats, decimals, text in byte order, and
a PostgreSQL date or timestamp), its MIN and MAX. They are compared with the part's
Parquet footer only (its row count, each column's null count, min and max; no data page
is read). Each chunk is:

  match     every figure compared is equal
  mismatch  a figure differs: each is named (rows, column X non-null, column X min/max)
  unknown   its part is missing or unreadable, or its footer lacks a statistic

Figures that cannot be compared exactly (min and max of any other column;
every column figure of an NDJSON or CSV part) are listed as not compared. The source is
read as it is now: a source changed since the run is the expected cause of a mismatch.
Nothing is written to the prefix or the source; the verdict (match, mismatch or unknown,
with the chunk counts) is recorded in the journal as the run's last verification, which
'wharf runs' shows (not under state: bucket, nor for a run the state file does not hold).
Exit 0: every chunk matches; 1: a chunk does not match
(WHARF_RECONCILE_MISMATCH), or the run cannot be reconciled (WHARF_RECONCILE_REFUSED);
2: usage.`,
		Example: `  wharf reconcile -c examples/quickstart.yaml
  wharf reconcile -c wharf.yaml --export orders --date 2026-01-31
  wharf reconcile -c wharf.yaml --export orders --run-id 20260131T020000Z-1a2b3c --format json`,
		Args: args(0, 0, "no arguments (the exports come from the config file)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if parallel < 1 {
				return usageErr(fmt.Errorf("reconcile: --parallel %d: want 1 or more", parallel))
			}
			return a.reconcile(cmd, f, parallel, metrics)
		},
	}
	f.addSelect(cmd, "resolve {run_id} to this run id (default: the export's last run)")
	cmd.Flags().IntVar(&parallel, "parallel", parallel, "chunks queried on the source at once")
	addMetricsFile(cmd.Flags(), &metrics)
	return cmd
}

func (a *app) reconcile(cmd *cobra.Command, f validateFlags, parallel int, metrics string) (err error) {
	ctx := cmd.Context()
	var failed error
	mf, err := startMetrics(metrics, "reconcile")
	if err != nil {
		return err
	}
	defer closeMetrics(mf, &err)
	err = a.eachPrefix(ctx, "reconcile", f, func(h export.History, e *export.Export, prefix string) error {
		j := mf.Begin(e.Name)
		r, err := reconcile.Run(ctx, reconcile.Options{Export: e, Prefix: prefix, Store: &e.Store, Getenv: a.getenv, Parallel: parallel})
		if err != nil {
			err = fmt.Errorf("reconcile %s: %w", e.Name, err)
			_ = j.End(err) // a failure to write shows at the Close
			return err
		}
		j.SetRunID(r.RunID)
		j.Set("chunks", float64(len(r.Chunks)))
		j.Set("matched", float64(r.Matched))
		j.Set("mismatched", float64(r.Mismatched))
		j.Set("unknown", float64(r.Unknown))
		_ = j.End(r.Err()) // a failure to write shows at the Close
		if err := a.show(r, textOf(r.Text)); err != nil {
			return err
		}
		if err := recordVerification(ctx, h, e, r.RunID, reconciled(r)); err != nil {
			return fmt.Errorf("reconcile %s: %w", e.Name, err)
		}
		if err := r.Err(); err != nil && failed == nil {
			failed = err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return failed
}
