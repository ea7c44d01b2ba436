package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/metricsfile"
	"github.com/wharfdata/wharf/store"
)

type exportFlags struct {
	export      string
	resume      bool
	force       bool
	validate    bool
	parallel    int
	metricsFile string
}

func (a *app) exportCommand() *cobra.Command {
	var f exportFlags
	cmd := &cobra.Command{
		Use:   "export [-c wharf.yaml] [--export NAME]",
		Short: "Export database tables to a verified dataset: parts, manifest.json, _SUCCESS",
		Long: `Export each table the config file names (SQLite or PostgreSQL) to its destination as
Parquet (zstd), NDJSON or CSV parts, then manifest.json listing every part with its size,
rows and sha256, then _SUCCESS holding the sha256 of the manifest. A downstream reader that
sees _SUCCESS can trust the prefix; 'wharf validate' proves it without the source.

Runs are journaled in the state file (default .wharf/state.db beside the config). An
interrupted or failed run continues with --resume: committed chunks are kept, unfinished
ones rewritten, and an object the journal does not vouch for is moved under
_quarantine/<run_id>/, never deleted. --resume on a prefix that already holds _SUCCESS is
refused (exit 5) unless the export's last run failed, or --force. --resume continues only the
run of the export as it was defined: after an edit of its source, table, query, chunk_key,
mode, cursor_column, format or value options it is refused (exit 2); run without --resume.

Every chunk of a run is read from one snapshot of the source (consistency: snapshot, the
default: one transaction held open for the run); consistency: chunk reads each chunk in its
own transaction instead. docs/export.md says what each promises and costs the source.

Exports run one after another, in the config's order; the first failure stops the command.
With --format json each export is one line: the run (run_id, resolved_prefix, status,
rows, bytes, parts…) and, with --validate, its validation.`,
		Example: `  wharf export -c examples/quickstart.yaml
  wharf export -c wharf.yaml --export orders --parallel 4 --validate
  wharf export -c wharf.yaml --export orders --resume`,
		Args: args(0, 0, "no arguments (the exports are in the config file)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.parallel < 1 {
				return usageErr(fmt.Errorf("export: --parallel %d: want 1 or more", f.parallel))
			}
			if f.force && !f.resume {
				return usageErr(fmt.Errorf("export: --force goes with --resume"))
			}
			return a.exportAll(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.export, "export", "", "run only the export with this name")
	fl.BoolVar(&f.resume, "resume", false, "continue the export's interrupted or failed run")
	fl.BoolVar(&f.force, "force", false, "with --resume: run even when the prefix holds _SUCCESS")
	fl.BoolVar(&f.validate, "validate", false, "validate each prefix after its export")
	fl.IntVar(&f.parallel, "parallel", 1, "chunks read and written at once")
	addMetricsFile(fl, &f.metricsFile)
	return cmd
}

// exportOutcome is one export's line of --format json output.
type exportOutcome struct {
	*export.Result
	Validation *dataset.Validation `json:"validation,omitempty"`
	DemoSource string              `json:"demo_source_created,omitempty"`
}

func (a *app) exportAll(ctx context.Context, f exportFlags) (err error) {
	cfg, err := a.exportsConfig()
	if err != nil {
		return err
	}
	defer a.limitMemory(export.MemoryBound)()
	exports, err := cfg.pick(f.export)
	if err != nil {
		return err
	}
	for _, e := range exports {
		root, _, templated := strings.Cut(e.Destination, "{")
		if templated {
			root = root[:strings.LastIndex(root, "/")+1]
		}
		if err := refuseBeside(f.metricsFile, "destination of export "+e.Name, root); err != nil {
			return err
		}
	}
	mf, err := startMetrics(f.metricsFile, "export")
	if err != nil {
		return err
	}
	defer closeMetrics(mf, &err)
	for _, e := range exports {
		j := mf.Begin(e.Name)
		err := a.exportOne(ctx, cfg, e, f, j)
		_ = j.End(err) // a failure to write shows at the Close
		if err != nil {
			return err
		}
	}
	return nil
}

func (a *app) exportOne(ctx context.Context, cfg *config, e export.Export, f exportFlags, j *metricsfile.Job) error {
	var out exportOutcome
	demo, err := export.PrepareDemo(ctx, e)
	if err != nil {
		return err
	}
	out.DemoSource = demo
	bar := a.newExportBar(e.Name)
	opts := export.Options{
		StatePath: cfg.file.State, Parallel: f.parallel, Resume: f.resume, Force: f.force,
		Version: buildVersion().Version, Logger: a.log, Progress: bar.update, Getenv: a.getenv,
	}
	e.Store.Wrap = chainWraps(exportTestWrap(a.getenv), leaseTestWrap(a.getenv))
	lc, err := a.leaseSection() // the writer lease, when the state is the bucket's
	if err != nil {
		return err
	}
	opts.Lease, opts.Verdicts = &lc, a.verdicts()
	res, err := export.Run(ctx, e, opts)
	bar.bar.Finish(err == nil, true)
	if res != nil {
		j.SetRunID(res.RunID)
		j.Set("rows", float64(res.Rows))
		j.Set("bytes", float64(res.Bytes))
		j.Set("parts", float64(len(res.Parts)))
	}
	if err != nil {
		if res != nil { // one line: the run, where, and why
			return fmt.Errorf("export %s: run %s %s at %s: %w", e.Name, res.RunID, res.Status, shortPrefix(res.Prefix), err)
		}
		return fmt.Errorf("export %s: %w", e.Name, err)
	}
	out.Result = res
	if f.validate || e.Validate {
		if out.Validation, err = dataset.ValidateURL(ctx, res.Prefix, &e.Store, false); err != nil {
			return fmt.Errorf("export %s: %w", e.Name, err)
		}
		if err := recordVerification(ctx, cfg.history(), &e, res.RunID, validated(out.Validation)); err != nil {
			return fmt.Errorf("export %s: %w", e.Name, err)
		}
	}
	if err := a.reportExport(e, cfg, out); err != nil {
		return err
	}
	if out.Validation != nil {
		return out.Validation.NotCertified()
	}
	return nil
}

func (a *app) reportExport(e export.Export, cfg *config, o exportOutcome) error {
	if a.format == "json" {
		return writeJSON(a.out, o)
	}
	if a.quiet {
		return nil
	}
	var b strings.Builder
	row := func(k, format string, v ...any) { fmt.Fprintf(&b, "  %-11s %s\n", k+":", fmt.Sprintf(format, v...)) }
	r := o.Result
	if o.DemoSource != "" {
		fmt.Fprintf(&b, "created the demo source %s (%d rows in table orders)\n", displayPath(o.DemoSource), export.DemoRows)
	}
	fmt.Fprintf(&b, "export %s: %s, run %s\n", e.Name, r.Status, r.RunID)
	resumed := ""
	if r.Resumed {
		resumed = fmt.Sprintf(" (resumed: %d part(s) kept, %d quarantined)", len(r.Skipped), len(r.Quarantined))
	}
	row("rows", "%d in %d part(s), %s, %s%s", r.Rows, len(r.Parts), textfmt.Size(r.Bytes),
		r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond), resumed)
	row("dataset", "%s", shortPrefix(r.Prefix))
	if v := o.Validation; v != nil {
		row("validate", "%s", validationSummary(v))
	}
	if q := queryHint(e.Format, r, cfg, e.Name); q != "" {
		row("query it", "%s", q)
	}
	if t := r.Table; t != nil {
		how := fmt.Sprintf("committed, snapshot %d", t.Snapshot)
		switch {
		case t.Empty:
			how = "no rows, nothing to append"
		case t.Already:
			how = fmt.Sprintf("already in it, snapshot %d", t.Snapshot)
		}
		if len(t.CaughtUp) > 0 {
			how += fmt.Sprintf(", after %d earlier run(s) it lacked", len(t.CaughtUp))
		}
		if t.Catalog != "" {
			row("table", "%s, in the catalog as %s (metadata %05d): wharf table show %s", how, t.Catalog, t.Version, shellPrefix(t.Metadata))
		} else {
			row("table", "%s (metadata v%d): wharf table show %s", how, t.Version, shellPrefix(t.Location))
		}
	}
	row("journal", "wharf runs -c %s", displayPath(cfg.path))
	_, err := io.WriteString(a.out, b.String())
	return err
}

func validationSummary(v *dataset.Validation) string {
	if v.Certified {
		return fmt.Sprintf("certified (%d parts, %d rows, _SUCCESS matches manifest.json)", v.Parts, v.Rows)
	}
	return fmt.Sprintf("NOT certified: %d problem(s)", len(v.Problems))
}

// queryHint is a DuckDB one-liner that reads exactly this run's parts (the manifest's list,
// not a glob: earlier runs' parts, or any stray file, may sit beside them), or, for a run of
// more than a few parts, the command that lists them.
func queryHint(f export.Format, r *export.Result, cfg *config, name string) string {
	if len(r.Parts) == 0 {
		return ""
	}
	reader := map[export.Format]string{export.FormatParquet: "read_parquet", export.FormatNDJSON: "read_json_auto",
		export.FormatCSV: "read_csv_auto"}[f]
	if len(r.Parts) > maxHintParts {
		return fmt.Sprintf(`duckdb -c "SELECT count(*) FROM %s([$(wharf parts -c %s --export %s --prefix %s | sed "s/.*/'&'/" | paste -sd,)])"`,
			reader, displayPath(cfg.path), name, shellPrefix(r.Prefix))
	}
	base := strings.TrimSuffix(shortPrefix(r.Prefix), "/") + "/"
	files := make([]string, len(r.Parts))
	for i, p := range r.Parts {
		files[i] = "'" + base + p.Key + "'"
	}
	return fmt.Sprintf(`duckdb -c "SELECT count(*) FROM %s([%s])"`, reader, strings.Join(files, ", "))
}

// shellPrefix is shortPrefix as a command's argument: a relative directory starts with ./
func shellPrefix(prefix string) string {
	p := shortPrefix(prefix)
	if strings.Contains(p, "://") || filepath.IsAbs(p) || strings.HasPrefix(p, ".") {
		return p
	}
	return "./" + p
}

// maxHintParts is how many parts the query hint names one by one.
const maxHintParts = 8

// displayPrefix shows a local prefix as a directory path (which a shell and DuckDB take),
// other prefixes as their URL.
func displayPrefix(prefix string) string {
	loc, err := store.ParseURL(prefix)
	if err != nil {
		return prefix
	}
	// A prefix inside a store rooted higher up (a parent holding .wharf-meta, as the state
	// root of state: bucket does) keeps its key.
	if dir, ok := loc.LocalPath(); ok {
		return dir + "/"
	}
	return prefix
}

// shortPrefix is displayPrefix, relative to the working directory when the prefix is a local
// directory under it.
func shortPrefix(prefix string) string {
	p := displayPrefix(prefix)
	if !filepath.IsAbs(p) {
		return p
	}
	if rel := displayPath(p); rel != p {
		return rel + "/"
	}
	return p
}
