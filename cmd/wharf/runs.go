package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/export"
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
started and finished, its prefix and, for a failed run, the error. A failed or interrupted
run is what 'wharf export --resume' continues.

With --format json each run is one line: {"run_id","export","status","error","prefix",
"rows","parts","bytes","attempts","started_at","finished_at","cursor"}.`,
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
	var runs []export.RunRecord
	if cfg.file.State == export.StateBucket {
		if runs, err = loggedRuns(ctx, cfg, f); err != nil {
			return err
		}
	} else if _, err := os.Stat(cfg.file.State); !errors.Is(err, os.ErrNotExist) {
		j, err := export.OpenJournal(ctx, cfg.file.State)
		if err != nil {
			return err
		}
		defer j.Close()
		if runs, err = j.Runs(ctx, f.export, f.limit); err != nil {
			return err
		}
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
	fmt.Fprintln(tw, "RUN ID\tEXPORT\tSTATUS\tROWS\tPARTS\tBYTES\tSTARTED (UTC)\tTOOK\tPREFIX\tERROR")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", r.RunID, r.Export, r.Status, r.Rows,
			r.Parts, humanSize(r.Bytes), formatTime(r.StartedAt), took(r), shortPrefix(r.Prefix), orDash(firstLine(r.Error, 120)))
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

// loggedRuns reads the runs of each export (or f.export's) from its commit log (state:
// bucket), newest first, at most f.limit.
func loggedRuns(ctx context.Context, cfg *config, f runsFlags) ([]export.RunRecord, error) {
	exports, err := cfg.pick(f.export)
	if err != nil {
		return nil, err
	}
	var runs []export.RunRecord
	for _, e := range exports {
		rs, err := export.LoggedRuns(ctx, &e, &e.Store)
		if err != nil {
			return nil, fmt.Errorf("runs %s: %w", e.Name, err)
		}
		runs = append(runs, rs...)
	}
	slices.SortStableFunc(runs, func(a, b export.RunRecord) int { return b.StartedAt.Compare(a.StartedAt) })
	if f.limit > 0 && len(runs) > f.limit {
		runs = runs[:f.limit]
	}
	return runs, nil
}
