package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/internal/yamlconf"
	"github.com/wharfdata/wharf/internal/yamlconf/yamlflag"
	"github.com/wharfdata/wharf/metricsfile"
)

func (a *app) backfillCommand() *cobra.Command {
	var replan bool
	var metrics string
	cmd := &cobra.Command{
		Use:   "backfill [URL] --to DEST [--job NAME] [--coordinator bucket|nats://HOST:PORT|solo]",
		Short: "Read every object under a prefix as NDJSON records, across a fleet of workers",
		Long: `Read every object under the prefix URL (NDJSON, plain, gzip or zstd) as records, once,
into DEST, as a bounded job that ends by itself. Start the same command on several machines
and they share the job.

The leader lists the prefix once and packs it into splits of whole objects (~64 MiB); each
split has an id made of its objects' keys and ETags. Workers lease splits from the
coordinator, read each object pinned to its ETag in ranged windows, decompress it (by
extension or magic bytes), cut it into records, and commit a watermark once the sink has
taken them. A worker that dies leaves its splits to the others, who resume them from the
watermark after --lease-ttl and a fifth more. A job has one plan for its life: a worker that
wins the leader lease reads the plan that is there before it makes one. Every worker needs a
node id of its own: a second live worker with the same id stops (exit 2,
WHARF_BACKFILL_NODE_ID_IN_USE).

  --to -           the records on standard output, one a line (at-least-once): a record counts
                   as delivered once the reader took it out of the pipe (or a file was synced);
                   a reader that stops early leaves the rest to the next run
  --to URL         one part-<id>.ndjson.zst per split, then manifest.json and _SUCCESS: each
                   record exactly once; 'wharf validate [--deep] URL' certifies it. URL may not
                   lie where a listing of the source reads (s3://b/in reads s3://b/inx/)

Coordinators: bucket (records under _wharf/backfill/<job>/ of the source's bucket, by
conditional writes; the store must pass 'wharf probe'), nats://HOST:PORT (NATS JetStream
key-value), solo (this process only: a restart reads the prefix again).

A deleted, overwritten, corrupt or unreadable object fails an attempt of its split; after
--max-attempts failures the object is quarantined and its split delivers the rest without
it: the job goes on, and ends failed (WHARF_BACKFILL_QUARANTINED, exit 1) naming each bad
object and why. A job already finished exits 5
(WHARF_BACKFILL_ALREADY_COMPLETE); --replan lists the prefix again. Every key of the config
file's backfill: section is also a flag, but source (the argument), the NATS credentials and
the stores' options. See docs/backfill.md.`,
		Example: `  wharf backfill s3://logs/app/2026/ --to - | jq .level
  wharf backfill s3://logs/app/2026/ --to s3://lake/app-2026/ --job app-2026
  WHARF_NODE_ID=w1 wharf backfill s3://logs/app/ --to - --coordinator nats://10.0.0.5:4222 --listen 127.0.0.1:9465
  wharf backfill status --job app-2026 s3://logs/app/2026/`,
		Args: args(0, 1, "the source prefix URL (or source: in the config file's backfill: section)"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			cfg, err := a.backfillConfig(cmd.Flags(), argv)
			if err != nil {
				return err
			}
			return a.backfill(cmd.Context(), cfg, replan, metrics)
		},
	}
	yamlflag.Add(cmd.Flags(), backfill.DefaultConfig())
	cmd.Flags().BoolVar(&replan, "replan", false, "list the prefix again when the job has finished (new and overwritten objects become new splits; done splits stay done)")
	addMetricsFile(cmd.Flags(), &metrics)
	cmd.AddCommand(a.backfillStatusCommand())
	return cmd
}

// backfillConfig builds the job's config in the one order: the defaults, then the
// environment (WHARF_NODE_ID), then the config file's backfill: section, then the flags and
// the URL argument.
func (a *app) backfillConfig(fl *pflag.FlagSet, argv []string) (backfill.Config, error) {
	cfg := backfill.DefaultConfig()
	cfg.FromEnv(a.getenv)
	if c, err := a.configFile(); err != nil {
		return cfg, err
	} else if c != nil && c.file.Backfill != nil {
		cfg = *c.file.Backfill
	}
	if err := yamlflag.Apply(fl, &cfg, &yamlconf.Decoder{Getenv: a.getenv}); err != nil {
		return cfg, usageErr(fmt.Errorf("backfill: %w", err))
	}
	if len(argv) == 1 {
		cfg.Source = argv[0]
	}
	cfg.Store = *a.storeConfig(&cfg.Store)
	cfg.ToStore = *a.storeConfig(&cfg.ToStore)
	if err := cfg.Check(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// backfill runs one worker of the job.
func (a *app) backfill(ctx context.Context, cfg backfill.Config, replan bool, metrics string) (err error) {
	env := a.backfillEnv()
	env.Replan, env.WrapSink = replan, backfillTestSink(a.getenv)
	cfg.Store.Wrap = backfillTestWrap(a.getenv)
	if err := refuseBeside(metrics, "source", cfg.Source); err != nil {
		return err
	}
	mf, err := startMetrics(metrics, "backfill")
	if err != nil {
		return err
	}
	defer closeMetrics(mf, &err)
	w, err := backfill.Open(ctx, cfg, env)
	if err != nil {
		return err
	}
	defer w.Close()
	defer a.limitMemory(cfg.MemoryBound())()
	bar := a.backfillBar(w.Job)
	mj := mf.Begin(cfg.Job)
	figures := func() {
		st := w.Status()
		mj.Set("records", float64(st.Records))
		mj.Set("objects", float64(st.Objects))
		mj.Set("bytes", float64(st.Bytes))
		mj.Set("splits", float64(st.Splits.Planned))
		mj.Set("splits_done", float64(st.Splits.Done))
		mj.Set("splits_quarantined", float64(st.Splits.Quarantined))
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // a long job's figures as it goes, for the file's periodic writes
		defer close(done)
		if mf == nil {
			<-stop
			return
		}
		t := time.NewTicker(metricsfile.DefaultEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				figures()
			}
		}
	}()
	err = w.Run(ctx)
	close(stop)
	<-done
	figures()
	_ = mj.End(err) // a failure to write shows at the Close
	bar.Finish(err == nil, false)
	st := w.Status()
	if err != nil || a.quiet {
		return err
	}
	out := a.out
	if w.Stdout() {
		out = os.Stderr // the records own standard output
		if a.format != "pretty" {
			return nil
		}
		out = a.err
	}
	if a.format == "json" {
		return writeJSON(out, st)
	}
	fmt.Fprintf(out, "backfill %s: %s; %d split(s) of plan %s, %d object(s), %s; %d record(s) by this worker (%s)\n",
		st.Job, st.State, st.Splits.Planned, backfill.ShortID(st.Plan), st.Objects, textfmt.Size(st.Bytes), st.Records, st.Node)
	return nil
}

// backfillEnv is what a backfill takes from the process: its variables, standard output, the
// log, the version, the global store options and the probe's remembered verdicts.
func (a *app) backfillEnv() backfill.Env {
	return backfill.Env{Getenv: a.getenv, Stdout: a.out, Logger: a.log, Version: buildVersion().Version,
		Store: a.storeConfig(nil), Verdicts: a.verdicts()}
}

func (a *app) backfillStatusCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status [URL] --job NAME [--coordinator bucket|nats://HOST:PORT]",
		Short: "Show a backfill job from any machine: splits planned, leased, done, quarantined; who holds what",
		Long: `Read a backfill job's records from its coordinator and show its plan, how many splits are
pending, leased, done and quarantined, which worker holds which split and how far it got,
and every quarantined split with the objects and reasons that failed it. With the bucket
coordinator give the source URL (its bucket holds the job); with NATS, --coordinator. It
reads only. Exit 0 unless the job failed (1, naming what was quarantined).`,
		Example: `  wharf backfill status --job app-2026 s3://logs/app/2026/
  wharf backfill status --job app-2026 --coordinator nats://10.0.0.5:4222 --format json`,
		Args: args(0, 1, "the source prefix URL (for the bucket coordinator)"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			cfg, err := a.backfillConfig(cmd.Flags(), argv)
			if err != nil && !errors.Is(err, backfill.ErrConfig) {
				return err
			}
			if cfg.Job == "" {
				return usageErr(errors.New("backfill status: --job is required (or job: in the backfill: section)"))
			}
			if !cfg.IsNATS() && cfg.CoordinatorStore == "" && cfg.Source == "" {
				return usageErr(errors.New("backfill status: give the source URL (its bucket holds the job) or --coordinator"))
			}
			r, err := backfill.ReadReport(cmd.Context(), cfg, a.backfillEnv())
			if err != nil {
				return err
			}
			if err := a.show(r, r.WriteText); err != nil {
				return err
			}
			return r.Err()
		},
	}
	fl := cmd.Flags()
	yamlflag.Add(fl, backfill.DefaultConfig(), "job", "coordinator", "coordinator_store")
	fl.Lookup("job").Usage = "the job's name (required, here or as job: in the backfill: section)"
	fl.Lookup("coordinator").Usage = "bucket or nats://HOST:PORT (several separated by commas)"
	return cmd
}
