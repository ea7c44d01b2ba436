package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/cas/natskv"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/listen"
	"github.com/wharfdata/wharf/internal/yamlconf/yamlflag"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store"
)

// backfillWorld is what a backfill worker opens: the source (at its bucket's root), the
// sink and the coordinator.
type backfillWorld struct {
	src    *store.Store
	prefix string
	sink   backfill.Sink
	stdout bool
	coord  *backfill.Coordinator
	closer []func()
}

func (w *backfillWorld) close() {
	for i := len(w.closer) - 1; i >= 0; i-- {
		w.closer[i]()
	}
}

// openBackfill opens the source, the sink and the coordinator of cfg (filling in the job
// name). Anything it fails on is named; nothing is written before the coordinator is open.
func (a *app) openBackfill(ctx context.Context, cfg *backfill.Config) (_ *backfillWorld, err error) {
	w := &backfillWorld{}
	defer func() {
		if err != nil {
			w.close() // w itself, not the nil a failure returns
		}
	}()
	loc, err := cfg.Store.ParseURL(cfg.Source)
	if err != nil {
		return nil, err
	}
	w.prefix = loc.Key
	root := loc
	root.Key = ""
	cfg.Store.Wrap = backfillTestWrap(a.getenv)
	if w.src, err = store.OpenLocation(ctx, root, &cfg.Store); err != nil {
		return nil, fmt.Errorf("source %s: %w", cfg.Source, err)
	}
	w.closer = append(w.closer, func() { w.src.Close() })
	if err := a.openSink(ctx, cfg, w); err != nil {
		return nil, err
	}
	if cfg.Job == "" {
		cfg.Job = backfill.DefaultJobName(cfg.Source, w.sink.URL())
	}
	w.coord, err = a.openCoordinator(ctx, cfg, w.src, w.prefix, true)
	if err != nil {
		return nil, err
	}
	w.closer = append(w.closer, func() { w.coord.Close() })
	return w, nil
}

func (a *app) openSink(ctx context.Context, cfg *backfill.Config, w *backfillWorld) error {
	if backfill.IsStdout(cfg.To) {
		w.sink, w.stdout = backfill.NewStdout(recordStream(a.out), cfg.CommitInterval), true
		return nil
	}
	dst, err := store.Open(ctx, cfg.To, &cfg.ToStore)
	if err != nil {
		return fmt.Errorf("to %s: %w", cfg.To, err)
	}
	w.closer = append(w.closer, func() { dst.Close() })
	if err := backfill.Apart(w.src, w.prefix, dst, "to", cfg.To); err != nil {
		return err
	}
	w.sink = backfillTestSink(a.getenv, backfill.NewStoreSink(dst, cfg.To, cfg.Job, buildVersion().Version))
	return nil
}

// openCoordinator opens the coordinator cfg names; src is the source's store (at its bucket's
// root, read at prefix). With check, the bucket coordinator's records must lie apart from
// the source, and its store is probed (or its remembered verdict read): the job's leases
// (lease.Open) refuse a store not proven cas.
func (a *app) openCoordinator(ctx context.Context, cfg *backfill.Config, src *store.Store, prefix string, check bool) (*backfill.Coordinator, error) {
	switch {
	case cfg.Coordinator == backfill.CoordinatorSolo:
		return backfill.NewSolo(), nil
	case cfg.IsNATS():
		return a.openNATS(ctx, cfg)
	}
	s, owned := src, false
	if cfg.CoordinatorStore != "" {
		var err error
		if s, err = store.Open(ctx, cfg.CoordinatorStore, a.storeConfig(nil)); err != nil {
			return nil, fmt.Errorf("coordinator_store %s: %w", cfg.CoordinatorStore, err)
		}
		owned = true
	}
	fail := func(err error) (*backfill.Coordinator, error) {
		if owned {
			s.Close()
		}
		return nil, err
	}
	jobs := s.Sub(backfill.BucketPrefix(cfg.Job))
	if !check {
		return closing(backfill.NewBucket(jobs, nil), s, owned), nil
	}
	if err := backfill.Apart(src, prefix, jobs, "coordinator_store", cfg.CoordinatorStore); err != nil {
		return fail(err)
	}
	res, err := a.verdicts().Coordination(ctx, s)
	if err != nil {
		return fail(fmt.Errorf("probing the bucket coordinator's store: %w", err))
	}
	return closing(backfill.NewBucket(jobs, &lease.Options{Probe: res, Verdicts: a.verdicts()}), s, owned), nil
}

// closing makes c close s, the coordinator_store it was opened on, when owned (the source's
// store is closed by its opener).
func closing(c *backfill.Coordinator, s *store.Store, owned bool) *backfill.Coordinator {
	if owned {
		c.OnClose(func() error { s.Close(); return nil })
	}
	return c
}

// openNATS opens the NATS coordinator: the job's key-value bucket (backfill.NATSBucket). A
// failure to reach it is the coordinator's (WHARF_BACKFILL_COORDINATOR_FAILED), a bad option
// a config error.
func (a *app) openNATS(ctx context.Context, cfg *backfill.Config) (*backfill.Coordinator, error) {
	o := natskv.Options{Servers: cfg.Coordinator, Bucket: backfill.NATSBucket(cfg.Job), Description: "wharf backfill job " + cfg.Job,
		Replicas: cfg.NATS.Replicas, User: cfg.NATS.User, Logger: a.log}
	for _, r := range []struct {
		field, ref string
		to         *string
	}{{"nats.password", cfg.NATS.Password, &o.Password}, {"nats.token", cfg.NATS.Token, &o.Token}} {
		if r.ref == "" {
			continue
		}
		v, err := store.ResolveRef(r.field, r.ref, a.getenv)
		if err != nil {
			return nil, err
		}
		*r.to = v.Reveal()
	}
	k, err := natskv.Open(ctx, o)
	if errors.Is(err, store.ErrConfig) {
		return nil, errcode.E("open", "the NATS coordinator", backfill.ErrConfig, err)
	}
	if err != nil {
		return nil, errcode.E("open", "the NATS coordinator", backfill.ErrCoordinator, err)
	}
	return backfill.NewCAS(k).OnClose(k.Close), nil
}

// serveBackfill serves /metrics, /status and /healthz on cfg.Listen; stop shuts it down.
func (a *app) serveBackfill(cfg backfill.Config, j *backfill.Job) (stop func(), err error) {
	srv, err := listen.Serve(cfg.Listen, j.Handler(), a.log)
	if err != nil {
		return nil, errcode.E("listen", cfg.Listen, backfill.ErrListen, err)
	}
	if srv.Addr != nil {
		a.log.Info("serving /metrics, /status and /healthz", "listen", srv.Addr.String())
	}
	return srv.Stop, nil
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
			return a.backfillStatus(cmd.Context(), cfg)
		},
	}
	fl := cmd.Flags()
	yamlflag.Add(fl, backfill.DefaultConfig(), "job", "coordinator", "coordinator_store")
	fl.Lookup("job").Usage = "the job's name (required, here or as job: in the backfill: section)"
	fl.Lookup("coordinator").Usage = "bucket or nats://HOST:PORT (several separated by commas)"
	return cmd
}

func (a *app) backfillStatus(ctx context.Context, cfg backfill.Config) error {
	var src *store.Store
	if !cfg.IsNATS() && cfg.CoordinatorStore == "" {
		if cfg.Source == "" {
			return usageErr(errors.New("backfill status: give the source URL (its bucket holds the job) or --coordinator"))
		}
		loc, err := a.parseURL(cfg.Source)
		if err != nil {
			return err
		}
		loc.Key = ""
		if src, err = a.open(ctx, loc); err != nil {
			return err
		}
		defer src.Close()
	}
	coord, err := a.openCoordinator(ctx, &cfg, src, "", false)
	if err != nil {
		return err
	}
	defer coord.Close()
	r, err := backfill.Report(ctx, coord, cfg.Job)
	if err != nil {
		return err
	}
	if a.format == "json" {
		if err := writeJSON(a.out, r); err != nil {
			return err
		}
		return r.Err()
	}
	printReport(a.out, r)
	return r.Err()
}

// fileStream is a regular file that standard output names: synced before a commit.
type fileStream struct{ f *os.File }

func (s fileStream) Write(b []byte) (int, error) { return s.f.Write(b) }
func (s fileStream) Sync() error                 { return s.f.Sync() }

// plainStream is standard output as it is (a terminal, a socket): without the file's Sync,
// which would fail on it.
type plainStream struct{ f *os.File }

func (s plainStream) Write(b []byte) (int, error) { return s.f.Write(b) }
