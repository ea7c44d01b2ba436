package backfill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/wharfdata/wharf/cas/natskv"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/listen"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// Env is what a worker takes from the program that runs it, besides its Config.
type Env struct {
	// Getenv resolves the env:// references of the NATS credentials; nil reads nothing.
	Getenv func(string) string
	// Stdout takes the records when Config.To is "-". An *os.File is told apart by what it
	// is: a pipe's reader has received only what it took out of the pipe (Linux), a regular
	// file is synced before each commit, anything else is written to as it is; a reader that
	// closes the pipe is an error of the next write, not a SIGPIPE.
	Stdout  io.Writer
	Logger  *slog.Logger // nil: discard
	Version string       // the program's version, which a store sink's manifest records
	// Store holds the options of a store the Config gives none for: the coordinator_store,
	// and the source's bucket that ReadReport reads.
	Store *store.Config
	// Verdicts remembers the probe's verdicts on the bucket coordinator's store; nil probes
	// it on every start.
	Verdicts *probe.Verdicts
	Replan   bool // Options.Replan
	// WrapSink decorates a store sink (a test hook; nil leaves it as it is). The source's
	// bucket is decorated by Config.Store.Wrap, as every store is.
	WrapSink func(Sink) Sink
}

func (e Env) getenv(name string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(name)
}

func (e Env) store() *store.Config {
	if e.Store == nil {
		return &store.Config{}
	}
	return e.Store
}

// Worker is a Job with what it opened: its source, sink and coordinator, and the server
// of its status page, /metrics, /status and /healthz. Close closes them.
type Worker struct {
	*Job
	stdout  bool
	closers []func() error
}

// Open opens the worker cfg describes (cfg must have passed Check): the source at its
// bucket's root, the sink (Env.Stdout, or the store Config.To names, which must lie apart
// from the source), the coordinator (solo, NATS, or the bucket's, whose records must lie
// apart from the source and whose store must be proven cas by the probe or a remembered
// verdict), then the job, whose name is derived from the source and the sink when Config.Job
// is empty, and serves Config.Listen. A failure names what it failed on; nothing is written
// before the coordinator is open, and what was opened is closed.
func Open(ctx context.Context, cfg Config, env Env) (_ *Worker, err error) {
	if env.Logger == nil {
		env.Logger = slog.New(slog.DiscardHandler)
	}
	w := &Worker{}
	defer func() {
		if err != nil {
			w.Close()
		}
	}()
	loc, err := cfg.Store.ParseURL(cfg.Source)
	if err != nil {
		return nil, err
	}
	prefix := loc.Key
	loc.Key = ""
	src, err := store.OpenLocation(ctx, loc, &cfg.Store)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", cfg.Source, err)
	}
	w.closers = append(w.closers, src.Close)
	sink, err := w.openSink(ctx, &cfg, env, src, prefix)
	if err != nil {
		return nil, err
	}
	if cfg.Job == "" {
		cfg.Job = DefaultJobName(cfg.Source, sink.URL())
	}
	coord, err := openCoordinator(ctx, cfg, env, src, prefix, true)
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, coord.Close)
	if w.Job, err = New(cfg, Options{Coordinator: coord, Source: src, Prefix: prefix, Sink: sink,
		Logger: env.Logger, Replan: env.Replan}); err != nil {
		return nil, err
	}
	srv, err := listen.Serve(cfg.Listen, w.Handler(), env.Logger)
	if err != nil {
		return nil, errcode.E("listen", cfg.Listen, ErrListen, err)
	}
	if srv.Addr != nil {
		env.Logger.Info("serving the status page, /metrics, /status and /healthz", "listen", srv.Addr.String())
	}
	w.closers = append(w.closers, func() error { srv.Stop(); return nil })
	return w, nil
}

// Stdout reports whether the records go to Env.Stdout.
func (w *Worker) Stdout() bool { return w.stdout }

// Close stops the server and closes the coordinator, the sink's store and the source.
func (w *Worker) Close() error {
	var errs []error
	for i := len(w.closers) - 1; i >= 0; i-- {
		errs = append(errs, w.closers[i]())
	}
	w.closers = nil
	return errors.Join(errs...)
}

func (w *Worker) openSink(ctx context.Context, cfg *Config, env Env, src *store.Store, prefix string) (Sink, error) {
	if IsStdout(cfg.To) {
		w.stdout = true
		return NewStdout(recordStream(env.Stdout), cfg.CommitInterval), nil
	}
	dst, err := store.Open(ctx, cfg.To, &cfg.ToStore)
	if err != nil {
		return nil, fmt.Errorf("to %s: %w", cfg.To, err)
	}
	w.closers = append(w.closers, dst.Close)
	if err := Apart(src, prefix, dst, "to", cfg.To); err != nil {
		return nil, err
	}
	var sink Sink = NewStoreSink(dst, cfg.To, cfg.Job, env.Version)
	if env.WrapSink != nil {
		sink = env.WrapSink(sink)
	}
	return sink, nil
}

// ReadReport reads the job cfg names (Config.Job) from its coordinator, for reading only:
// NATS, the coordinator_store, or the bucket of Config.Source (opened with Env.Store).
func ReadReport(ctx context.Context, cfg Config, env Env) (*JobReport, error) {
	if env.Logger == nil {
		env.Logger = slog.New(slog.DiscardHandler)
	}
	var src *store.Store
	if !cfg.IsNATS() && cfg.CoordinatorStore == "" {
		loc, err := env.store().ParseURL(cfg.Source)
		if err != nil {
			return nil, err
		}
		loc.Key = ""
		if src, err = store.OpenLocation(ctx, loc, env.store()); err != nil {
			return nil, err
		}
		env.Logger.Debug("opened store", "url", loc.String(), "endpoint", src.Describe().Endpoint)
		defer src.Close()
	}
	coord, err := openCoordinator(ctx, cfg, env, src, "", false)
	if err != nil {
		return nil, err
	}
	defer coord.Close()
	return Report(ctx, coord, cfg.Job)
}

// openCoordinator opens the coordinator cfg names; src is the source's store (at its bucket's
// root, read at prefix). With check, the bucket coordinator's records must lie apart from
// the source, and its store is probed (or its remembered verdict read): the job's leases
// (lease.Open) refuse a store not proven cas.
func openCoordinator(ctx context.Context, cfg Config, env Env, src *store.Store, prefix string, check bool) (*Coordinator, error) {
	switch {
	case cfg.Coordinator == CoordinatorSolo:
		return NewSolo(), nil
	case cfg.IsNATS():
		return openNATS(ctx, cfg, env)
	}
	s, owned := src, false
	if cfg.CoordinatorStore != "" {
		var err error
		if s, err = store.Open(ctx, cfg.CoordinatorStore, env.store()); err != nil {
			return nil, fmt.Errorf("coordinator_store %s: %w", cfg.CoordinatorStore, err)
		}
		owned = true
	}
	fail := func(err error) (*Coordinator, error) {
		if owned {
			s.Close()
		}
		return nil, err
	}
	jobs := s.Sub(BucketPrefix(cfg.Job))
	if !check {
		return closing(NewBucket(jobs, nil), s, owned), nil
	}
	if err := Apart(src, prefix, jobs, "coordinator_store", cfg.CoordinatorStore); err != nil {
		return fail(err)
	}
	res, err := env.Verdicts.Coordination(ctx, s)
	if err != nil {
		return fail(fmt.Errorf("probing the bucket coordinator's store: %w", err))
	}
	return closing(NewBucket(jobs, &lease.Options{Probe: res, Verdicts: env.Verdicts}), s, owned), nil
}

// closing makes c close s, the coordinator_store it was opened on, when owned (the source's
// store is closed by its opener).
func closing(c *Coordinator, s *store.Store, owned bool) *Coordinator {
	if owned {
		c.OnClose(s.Close)
	}
	return c
}

// openNATS opens the NATS coordinator: the job's key-value bucket (NATSBucket). A failure to
// reach it is the coordinator's (ErrCoordinator), a bad option a config error.
func openNATS(ctx context.Context, cfg Config, env Env) (*Coordinator, error) {
	o := natskv.Options{Servers: cfg.Coordinator, Bucket: NATSBucket(cfg.Job), Description: "wharf backfill job " + cfg.Job,
		Replicas: cfg.NATS.Replicas, User: cfg.NATS.User, Logger: env.Logger}
	for _, r := range []struct {
		field, ref string
		to         *string
	}{{"nats.password", cfg.NATS.Password, &o.Password}, {"nats.token", cfg.NATS.Token, &o.Token}} {
		if r.ref == "" {
			continue
		}
		v, err := store.ResolveRef(r.field, r.ref, env.getenv)
		if err != nil {
			return nil, err
		}
		*r.to = v.Reveal()
	}
	k, err := natskv.Open(ctx, o)
	if errors.Is(err, store.ErrConfig) {
		return nil, errcode.E("open", "the NATS coordinator", ErrConfig, err)
	}
	if err != nil {
		return nil, errcode.E("open", "the NATS coordinator", ErrCoordinator, err)
	}
	return NewCAS(k).OnClose(k.Close), nil
}
