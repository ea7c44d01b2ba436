package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/textfmt"
)

type runsFlags struct {
	export string
	limit  int
}

func (a *app) runsCommand() *cobra.Command {
	var f runsFlags
	cmd := &cobra.Command{
		Use:   "runs [-c wharf.yaml] [--export NAME] [--limit N]",
		Short: "List the export runs recorded in the state file's journal",
		Long: `List the runs the journal (the state file named by the config, default .wharf/state.db
beside it) records, newest first: run id, export, status, rows, parts, bytes, when it
started and finished, its prefix, for a failed run the error, and when the run was last
verified and how: by 'wharf reconcile' (match, mismatch or unknown), or by 'wharf validate
-c' or 'wharf export --validate' (certified or not_certified), whichever came last. A
failed or interrupted run is what 'wharf export --resume' continues. Under state: bucket no
verification is recorded.

With --format json each run is one line: {"run_id","export","status","error","prefix",
"rows","parts","bytes","attempts","started_at","finished_at","cursor","verified_at",
"verified_by","verified_result","verified_detail"}; the verified_ fields are left out for
a run never verified.`,
		Example: `  wharf runs -c examples/quickstart.yaml
  wharf runs -c wharf.yaml --export orders --limit 5
  wharf runs -c wharf.yaml --format json | jq -r 'select(.status=="failed") | .run_id'`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.limit < 0 {
				return usageErr(fmt.Errorf("runs: --limit %d: want 0 (all) or more", f.limit))
			}
			return a.runs(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.export, "export", "", "only the runs of this export")
	fl.IntVar(&f.limit, "limit", 0, "at most this many runs (0: all)")
	return cmd
}

func (a *app) runs(ctx context.Context, f runsFlags) error {
	cfg, err := a.exportsConfig()
	if err != nil {
		return err
	}
	if f.export != "" {
		if _, err := cfg.pick(f.export); err != nil {
			return err
		}
	}
	runs, err := cfg.history().Runs(ctx, f.export, f.limit)
	if err != nil {
		return err
	}
	if a.format == "json" {
		for _, r := range runs {
			if err := writeJSON(a.out, r); err != nil {
				return err
			}
		}
		return nil
	}
	return writeRuns(a, cfg, runs)
}

func writeRuns(a *app, cfg *config, runs []export.RunRecord) error {
	if len(runs) == 0 {
		if !a.quiet {
			where := displayPath(cfg.file.State)
			if cfg.file.State == export.StateBucket {
				where = "the exports' commit logs (state: bucket)"
			}
			fmt.Fprintf(a.out, "no runs yet in %s\n", where)
		}
		return nil
	}
	tw := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN ID\tEXPORT\tSTATUS\tROWS\tPARTS\tBYTES\tSTARTED (UTC)\tTOOK\tPREFIX\tVERIFIED (UTC)\tERROR")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.RunID, r.Export, r.Status, r.Rows,
			r.Parts, textfmt.Size(r.Bytes), textfmt.Time(r.StartedAt), took(r), shortPrefix(r.Prefix), verifiedText(r.Verification),
			textfmt.Dash(firstLine(r.Error, 120)))
	}
	return tw.Flush()
}

func took(r export.RunRecord) string {
	if r.FinishedAt.IsZero() {
		return "-"
	}
	return r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond).String()
}

// firstLine keeps the first n bytes of s's first line.
func firstLine(s string, n int) string {
	for i, c := range s {
		if c == '\n' {
			s = s[:i]
			break
		}
	}
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
