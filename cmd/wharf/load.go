package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/progress"
	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/load"
	"github.com/wharfdata/wharf/store"
)

type loadFlags struct {
	validateFlags
	force    bool
	pool     int
	requests int
	target   load.Target
	key      string
	columns  string
	metrics  string
}

func (a *app) loadCommand() *cobra.Command {
	var f loadFlags
	cmd := &cobra.Command{
		Use:   "load [URL --target DB --table T | -c wharf.yaml [--export NAME] [--date YYYY-MM-DD] [--run-id R] [--prefix P]]",
		Short: "Load a certified export run into a PostgreSQL table",
		Long: `Load a certified run into a PostgreSQL table, never connecting to the export's source. The
prefix is resolved as validate resolves it (--date, default today UTC; --run-id, default
for a {run_id} destination the export's last run; or exactly --prefix, one export only),
and must be certified (--deep: every part re-read and decoded first). The target of each
export is its entry under load: in the config (target, password, table, mode, key,
ledger), or the flags below. With a URL, that certified prefix is loaded, whoever wrote it,
into --target's --table (--password: a reference, env://NAME or file:///path).

A backfill's store sink dataset (records) loads into a table of one jsonb column, record:
one row a record; or, with --columns (load.columns), into named columns taken from each
record's fields: name (jsonb) or name:type, type one of text, bigint, integer, double
precision, numeric, boolean, timestamptz, date, uuid, jsonb (a value not of its type fails
the load; a record that is not a JSON object is refused).

The table's columns come from the manifest's schema, through one type table
(docs/export.md); a type or format it lacks is refused by name before anything is written.
Exactly the manifest's parts are read, each checked against its size and sha256, and
streamed with COPY ... FROM STDIN (FORMAT binary). Modes:

  replace  (default) the table holds exactly the run's rows
  append   the run's rows are added (a delta run's)
  merge    rows replace those with the same key (--key), others are added

The whole load is one transaction that also writes a row of the load ledger (table
wharf_load_ledger beside the table): a crash leaves the table as it was, and a rerun
loads the run once. A run already loaded into the table is not loaded again (exit 0); a
run older than one already loaded, or loaded before with another manifest, is refused
unless --force. A missing table is created. --pool N loads N exports at once, each on one
connection; their storage requests share --max-requests (16) in flight. Exit 0: loaded, or nothing to do; 1: refused
(WHARF_LOAD_REFUSED) or the database failed (WHARF_LOAD_TARGET_FAILED); 2: usage.`,
		Example: `  wharf load -c wharf.yaml --export orders
  wharf load s3://lake/events/ --target postgres://loader@127.0.0.1:5432/wh --password env://WH_PW --table events
  wharf load -c wharf.yaml --export orders --run-id 20260131T020000Z-1a2b3c --mode merge --key id
  wharf load -c wharf.yaml --pool 4 --format json
  wharf load ./lake/ --target postgres://loader@127.0.0.1:5432/wh --table logs --columns host:text,at:timestamptz,msg:text`,
		Args: args(0, 1, "at most one prefix URL"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if f.pool < 1 || f.requests < 1 {
				return usageErr(fmt.Errorf("load: --pool %d, --max-requests %d: want 1 or more", f.pool, f.requests))
			}
			return a.load(cmd, argv, f)
		},
	}
	f.add(cmd, "re-read and decode every part before the load (as validate --deep)")
	fl := cmd.Flags()
	fl.BoolVar(&f.force, "force", false, "load a run the ledger refuses: older than one loaded, or loaded with another manifest")
	fl.IntVar(&f.pool, "pool", 1, "load this many exports at once")
	fl.IntVar(&f.requests, "max-requests", 16, "storage requests in flight at most, shared by every load of the process")
	fl.StringVar(&f.target.URL, "target", "", "the database, postgres://user@host:port/db (default: the export's load.target)")
	fl.StringVar(&f.target.Table, "table", "", "the table, name or schema.name (default: the export's load.table, else its name)")
	fl.StringVar((*string)(&f.target.Mode), "mode", "", "replace, append or merge (default: the export's load.mode, else replace)")
	fl.StringVar(&f.key, "key", "", "merge: the key columns, comma-separated (default: the export's load.key)")
	addMetricsFile(fl, &f.metrics)
	fl.StringVar(&f.columns, "columns", "", "records: the columns to take from their fields, name or name:type, comma-separated (default: the export's load.columns, else one jsonb column, record)")
	fl.StringVar(&f.target.Password, "password", "", "the database password's reference, env://NAME or file:///path (default: the export's load.password)")
	return cmd
}

// loadJob is one prefix's load.
type loadJob struct {
	export string // "" for a URL: the manifest's, whichever
	prefix string
	store  *store.Config
	target load.Target
}

func (a *app) load(cmd *cobra.Command, argv []string, f loadFlags) error {
	ctx := cmd.Context()
	var jobs []loadJob
	if len(argv) == 1 {
		for _, name := range []string{"export", "date", "run-id", "prefix"} {
			if cmd.Flags().Changed(name) {
				return usageErr(fmt.Errorf("load: --%s goes with a config file, not with a URL", name))
			}
		}
		if f.target.URL == "" || f.target.Table == "" {
			return usageErr(errors.New("load: a URL needs --target postgres://user@host:port/db and --table T"))
		}
		t, err := a.loadTarget(cmd, "", f)
		if err != nil {
			return err
		}
		jobs = append(jobs, loadJob{prefix: argv[0], store: a.storeConfig(nil), target: t})
	} else {
		err := a.eachPrefix(ctx, "load", f.validateFlags, func(_ export.History, e *export.Export, prefix string) error {
			t, err := a.loadTarget(cmd, e.Name, f)
			if err != nil {
				return err
			}
			jobs = append(jobs, loadJob{export: e.Name, prefix: prefix, store: &e.Store, target: t})
			return nil
		})
		if err != nil {
			return err
		}
	}
	defer a.limitMemory(load.MemoryBound)()
	budget := store.NewBudget(f.requests)
	for i := range jobs {
		cfg := *jobs[i].store
		cfg.Wrap = chainWraps(cfg.Wrap, budget.Wrap)
		jobs[i].store = &cfg
	}
	mf, err := startMetrics(f.metrics, "load")
	if err != nil {
		return err
	}
	bar := a.newLoadBar(len(jobs))
	results := make([]*load.Result, len(jobs))
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, f.pool)
	var wg sync.WaitGroup
	for i, j := range jobs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			name := j.export
			if name == "" {
				name = j.prefix
			}
			mj := mf.Begin(name)
			results[i], errs[i] = a.loadOne(ctx, j, f, bar.progress(i))
			if r := results[i]; r != nil {
				mj.SetRunID(r.RunID)
				mj.Set("rows", float64(r.Rows))
				mj.Set("bytes", float64(r.Bytes))
				mj.Set("parts", float64(r.Parts))
				if r.Loaded {
					mj.Set("loaded", 1) // 0: the ledger had it loaded already, nothing to do
				} else {
					mj.Set("loaded", 0)
				}
			}
			_ = mj.End(errs[i])
		})
	}
	wg.Wait()
	if err := mf.Close(nil); err != nil {
		return err
	}
	bar.bar.Finish(!slices.ContainsFunc(errs, func(err error) bool { return err != nil }), true)
	var failed error
	for i, r := range results {
		if errs[i] != nil {
			if failed != nil { // the first is printed as the command's error
				printError(a.err, a.format, errs[i], 1)
			} else {
				failed = errs[i]
			}
			continue
		}
		if err := a.show(r, textOf(r.Text)); err != nil {
			return err
		}
	}
	return failed
}

func (a *app) loadOne(ctx context.Context, j loadJob, f loadFlags, progress func(load.Progress)) (*load.Result, error) {
	if pause := loadTestPause(a.getenv); pause != nil {
		shown := progress
		progress = func(p load.Progress) { shown(p); pause(p) }
	}
	r, err := load.Run(ctx, load.Options{Export: j.export, Prefix: j.prefix, Store: j.store, Target: j.target,
		Deep: f.deep, Force: f.force, Getenv: a.getenv, Progress: progress})
	if err != nil && j.export != "" {
		return nil, fmt.Errorf("load %s: %w", j.export, err)
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", j.prefix, err)
	}
	return r, nil
}

// loadTarget is the export's load: entry with the flags given over it, checked.
func (a *app) loadTarget(cmd *cobra.Command, name string, f loadFlags) (load.Target, error) {
	var t load.Target
	if c := a.cfg; c != nil && c.file.Load[name] != nil {
		t = *c.file.Load[name]
	}
	fl := cmd.Flags()
	if fl.Changed("target") {
		t.URL = f.target.URL
	}
	if fl.Changed("table") {
		t.Table = f.target.Table
	}
	if fl.Changed("mode") {
		t.Mode = f.target.Mode
	}
	if fl.Changed("key") {
		t.Key = strings.Split(f.key, ",")
	}
	if fl.Changed("columns") {
		t.Columns = strings.Split(f.columns, ",")
	}
	if fl.Changed("password") {
		t.Password = f.target.Password
	}
	if t.URL == "" {
		return t, usageErr(fmt.Errorf("load: export %s has no target: add load: %s: target: postgres://user@host:port/db to the config, or give --target", name, name))
	}
	if err := t.Check(name); err != nil {
		return t, err
	}
	return t, nil
}

// loadBar draws the progress of every load of the command as one bar on a terminal: parts
// copied of all, rows, bytes and the byte rate. Off a terminal, with --quiet or --format json
// it draws nothing.
type loadBar struct {
	bar  *progress.Bar
	mu   sync.Mutex
	last []load.Progress
}

func (a *app) newLoadBar(jobs int) *loadBar {
	b := &loadBar{last: make([]load.Progress, jobs)}
	if a.drawsBars() {
		b.bar = progress.StartFigures(a.err, 0, true, func(elapsed time.Duration) progress.Figures {
			var sum load.Progress
			b.mu.Lock()
			for _, p := range b.last {
				sum.Parts += p.Parts
				sum.PartsDone += p.PartsDone
				sum.Rows += p.Rows
				sum.Bytes += p.Bytes
			}
			b.mu.Unlock()
			rate := float64(sum.Bytes) / max(elapsed.Seconds(), 0.001)
			return progress.Figures{Label: "load", Done: int64(sum.PartsDone), Total: int64(sum.Parts),
				Text: fmt.Sprintf("%d/%d parts  %d rows  %s  %s/s", sum.PartsDone, sum.Parts, sum.Rows,
					textfmt.Size(sum.Bytes), textfmt.Size(int64(rate)))}
		})
	}
	return b
}

// progress is load.Options.Progress of load i.
func (b *loadBar) progress(i int) func(load.Progress) {
	return func(p load.Progress) {
		b.mu.Lock()
		b.last[i] = p
		b.mu.Unlock()
	}
}
