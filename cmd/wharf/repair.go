package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/reconcile"
	"github.com/wharfdata/wharf/repair"
)

type repairFlags struct {
	validateFlags
	report  string
	execute bool
}

func (a *app) repairCommand() *cobra.Command {
	var f repairFlags
	cmd := &cobra.Command{
		Use:   "repair -c wharf.yaml [--export NAME] [--date YYYY-MM-DD] [--run-id R] [--prefix P] [--report FILE] [--execute]",
		Short: "Re-export the chunks of a certified run that do not reconcile with its source",
		Long: `Plan, and with --execute make, the repair of a certified run: every chunk that a reconcile
report (--report FILE, the JSON of wharf reconcile --format json; default: a fresh
reconcile) does not call a match is read again from the source with the SQL that read it,
and nothing else. The prefix is resolved as reconcile resolves it. Without --execute the
plan is printed and nothing is written.

With --execute each such chunk is written as a new part beside the old (named for a repair
id of its own: no part is written over or deleted), then a new manifest.json that lists the
new parts and marks the replaced ones superseded, then its _SUCCESS: parts, manifest, marker,
as every run. A reader of the manifest (wharf parts, validate, load) then reads each row
once, and a reconcile matches. Refused when the export's definition or the source's columns
changed since the run (export a new run instead). A run journaled in the export's commit
log (state: bucket) is repaired under the export's writer lease (another holder: exit 75),
and its new manifest is certified by an entry of that log, written before the manifest.
Run again after a crash between the manifest and _SUCCESS, it writes the _SUCCESS. Exit 0:
planned, repaired or nothing to do; 1: refused (WHARF_REPAIR_REFUSED) or failed; 2: usage;
75: the export's writer lease is held by another node.`,
		Example: `  wharf repair -c wharf.yaml --export orders --date 2026-01-31
  wharf reconcile -c wharf.yaml --export orders --format json > report.json
  wharf repair -c wharf.yaml --export orders --report report.json --execute`,
		Args: args(0, 0, "no arguments (the exports come from the config file)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.repair(cmd, f)
		},
	}
	f.addSelect(cmd, "resolve {run_id} to this run id (default: the export's last run)")
	fl := cmd.Flags()
	fl.StringVar(&f.report, "report", "", "repair from this reconcile report (wharf reconcile --format json) instead of reconciling afresh")
	fl.BoolVar(&f.execute, "execute", false, "make the repair (without it, only the plan is printed)")
	return cmd
}

func (a *app) repair(cmd *cobra.Command, f repairFlags) error {
	ctx := cmd.Context()
	var rep *reconcile.Report
	if f.report != "" {
		b, err := os.ReadFile(f.report)
		if err != nil {
			return usageErr(fmt.Errorf("repair: --report: %w", err))
		}
		rep = &reconcile.Report{}
		if err := json.Unmarshal(b, rep); err != nil || rep.RunID == "" {
			return usageErr(fmt.Errorf("repair: --report %s: not the JSON of wharf reconcile --format json (%v)", f.report, err))
		}
	}
	return a.eachPrefix(ctx, "repair", f.validateFlags, func(_ export.History, e *export.Export, prefix string) error {
		// The crash tests' pauses (nil in a release build), and the writer lease, for a run
		// journaled in the export's commit log.
		e.Store.Wrap = chainWraps(exportTestWrap(a.getenv), leaseTestWrap(a.getenv))
		lc, err := a.leaseSection()
		if err != nil {
			return err
		}
		p, err := repair.Run(ctx, repair.Options{Export: e, Prefix: prefix, Store: &e.Store, Getenv: a.getenv, Report: rep, Execute: f.execute,
			Lease: &lc, Verdicts: a.verdicts(), Logger: a.log})
		if err != nil {
			return fmt.Errorf("repair %s: %w", e.Name, err)
		}
		return a.show(p, textOf(p.Text))
	})
}
