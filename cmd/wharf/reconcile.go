package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/reconcile"
)

func (a *app) reconcileCommand() *cobra.Command {
	var f validateFlags
	cmd := &cobra.Command{
		Use:   "reconcile -c wharf.yaml [--export NAME] [--date YYYY-MM-DD] [--run-id R] [--prefix P]",
		Short: "Compare a certified export run with its source, chunk by chunk",
		Long: `Compare a certified run with the source it was exported from. The prefix is resolved as
validate resolves it (--date, default today UTC; --run-id, default for a {run_id}
destination the export's last run; or exactly --prefix, one export only). The run's
manifest must be certified, but for problems with single parts (a part deleted or
rewritten), whose chunks are then unknown.

For every chunk the source is queried once, with the WHERE clause that read the chunk (its
range of the chunk key and, for a delta run, the run's cursor window): COUNT(*) and, for
every column, its non-null count and, for an integer column (and a PostgreSQL date or
timestamp), its MIN and MAX. They are
compared with the part's Parquet footer only (its row count, each column's null count, min
and max; no data page is read). Each chunk is:

  match     every figure compared is equal
  mismatch  a figure differs: each is named (rows, column X non-null, column X min/max)
  unknown   its part is missing or unreadable, or its footer lacks a statistic

Figures that cannot be compared exactly (min and max of any other column;
every column figure of an NDJSON or CSV part) are listed as not compared. The source is
read as it is now: a source changed since the run is the expected cause of a mismatch.
Nothing is written. Exit 0: every chunk matches; 1: a chunk does not match
(WHARF_RECONCILE_MISMATCH), or the run cannot be reconciled (WHARF_RECONCILE_REFUSED);
2: usage.`,
		Example: `  wharf reconcile -c examples/quickstart.yaml
  wharf reconcile -c wharf.yaml --export orders --date 2026-01-31
  wharf reconcile -c wharf.yaml --export orders --run-id 20260131T020000Z-1a2b3c --format json`,
		Args: args(0, 0, "no arguments (the exports come from the config file)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.reconcile(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.export, "export", "", "only the export with this name")
	fl.StringVar(&f.date, "date", "", "resolve {date} for this day, YYYY-MM-DD (default: today, UTC)")
	fl.StringVar(&f.runID, "run-id", "", "resolve {run_id} to this run id (default: the export's last run)")
	fl.StringVar(&f.prefix, "prefix", "", "exactly this prefix (one export only)")
	return cmd
}

func (a *app) reconcile(cmd *cobra.Command, f validateFlags) error {
	ctx := cmd.Context()
	var failed error
	err := a.eachPrefix(ctx, "reconcile", f, func(e *export.Export, prefix string) error {
		r, err := reconcile.Run(ctx, reconcile.Options{Export: e, Prefix: prefix, Store: &e.Store, Getenv: a.getenv})
		if err != nil {
			return fmt.Errorf("reconcile %s: %w", e.Name, err)
		}
		if a.format == "json" {
			err = writeJSON(a.out, r)
		} else {
			_, err = io.WriteString(a.out, reconcileText(r))
		}
		if err != nil {
			return err
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

func reconcileText(r *reconcile.Report) string {
	var b strings.Builder
	row := func(k, format string, a ...any) { fmt.Fprintf(&b, "%-12s %s\n", k+":", fmt.Sprintf(format, a...)) }
	row("prefix", "%s", r.Prefix)
	how := string(r.Mode)
	if r.Consistency != "" {
		how += ", consistency " + string(r.Consistency)
	}
	row("run", "%s (export %s, %s)", r.RunID, r.Export, how)
	if r.Cursor != nil {
		row("window", "%s > %s and <= %s", r.Cursor.Column, orNone(r.Cursor.From.String()), orNone(r.Cursor.To.String()))
	}
	if r.Note != "" {
		row("note", "%s", r.Note)
	}
	row("chunks", "%d: %d match, %d mismatch, %d unknown", len(r.Chunks), r.Matched, r.Mismatched, r.Unknown)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHUNK\tSTATUS\tSOURCE ROWS\tPART ROWS\tDETAIL")
	notCompared := 0
	for _, c := range r.Chunks {
		notCompared += len(c.NotCompared)
		var detail []string
		for i, d := range c.Differences {
			if i == 3 { // the rest are in --format json
				detail = append(detail, fmt.Sprintf("%d more", len(c.Differences)-i))
				break
			}
			detail = append(detail, fmt.Sprintf("%s: source %s, part %s", d.Figure, figure(d.Source), figure(d.Part)))
		}
		if c.Reason != "" {
			detail = append(detail, c.Reason)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", c.Chunk, c.Status, figure(c.SourceRows), figure(c.PartRows), strings.Join(detail, "; "))
	}
	tw.Flush()
	if notCompared > 0 {
		fmt.Fprintf(&b, "not compared: %d figure(s) that cannot be compared exactly (listed by --format json)\n", notCompared)
	}
	if r.Mismatched > 0 {
		fmt.Fprintf(&b, "a source changed since the run is the expected cause of a mismatch (the run was read with consistency %s)\n", orNone(string(r.Consistency)))
	}
	return b.String()
}

func figure(v *int64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
