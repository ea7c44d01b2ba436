package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/internal/yamlconf"
	"github.com/wharfdata/wharf/internal/yamlconf/yamlflag"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/lease/supervise"
	"github.com/wharfdata/wharf/store"
)

type leaseFlags struct {
	store string
	fence int64
	limit int
	grace time.Duration
	// metrics is lease run's --metrics-file.
	metrics string
}

func (a *app) leaseCommand() *cobra.Command {
	var f leaseFlags
	cmd := &cobra.Command{
		Use:   "lease acquire|renew|release|show|log|run NAME --store URL",
		Short: "Fenced leases and a commit log kept in a store: a fenced flock for any job",
		Long: `A lease is a record in the store (_wharf/leases/NAME.json) that names its holder
node, a fence one above every earlier holder's, and the head of the lease's commit log.
Every write of a holder replaces that record under the revision it wrote last, so an
acquisition fences every earlier holder: one that was paused or partitioned past its TTL
can no longer commit (WHARF_LEASE_FENCED). Expiry is judged only on this machine's
monotonic clock: a contender takes a lease over only after seeing it unchanged for its
TTL plus the skew bound (30 s); a holder stops at its deadline, TTL less the skew bound
after its last successful renewal, whatever a request in flight does. A TTL is at most
7 days. See docs/lease.md.

The store must be proven cas by the probe (WHARF_COORDINATION_UNPROVEN otherwise, also
when a store proven cas is found, on every 8th acquisition, no longer to enforce
conditions); a local directory on a network mount gets a machine lease (a lock file on
this machine) instead. A bucket lease needs a node id other than "local": set
WHARF_NODE_ID or --node.

  acquire NAME   take the lease and print its fence (exit 75 if another node holds it)
  renew NAME     restart its TTL (only the holder; --fence pins the acquisition); a
                 running "lease run" of the node adopts the renewal
  release NAME   mark it released (only the holder); the next fence is one higher
  show NAME      the lease record and the log's head
  log NAME       the commit log, newest first, read from the lease record
  run NAME -- COMMAND [ARGS]
                 acquire, renew while COMMAND runs (WHARF_LEASE_FENCE holds the fence),
                 stop COMMAND (SIGTERM to its process group, then SIGKILL after --grace,
                 or after the skew bound if the lease's deadline passed) if the lease is
                 lost, release at the end, and exit with COMMAND's status. COMMAND and
                 what it starts never outlive wharf: should wharf die, even by SIGKILL,
                 a watcher process kills them, as it does once the lease's deadline
                 has passed while wharf is stopped (a command reading a terminal stays
                 in wharf's process group: on Linux it still gets a parent-death signal)

Every key of the config file's lease: section is also a flag:
` + flagKeys(lease.DefaultConfig()) + `.`,
		Example: `  WHARF_NODE_ID=host-a wharf lease run nightly --store s3://jobs/locks -- ./nightly.sh
  wharf lease acquire orders --store s3://jobs/locks --node host-a --ttl 5m
  wharf lease show orders --store s3://jobs/locks --format json
  wharf lease release orders --store s3://jobs/locks --node host-a --fence 7`,
	}
	fl := cmd.PersistentFlags()
	fl.StringVar(&f.store, "store", "", "the store that holds the lease: s3://bucket/prefix, gs://…, az://…, ./dir")
	yamlflag.Add(fl, lease.DefaultConfig())
	named := func(use, short string, run func(context.Context, *pflag.FlagSet, string) error) *cobra.Command {
		return &cobra.Command{Use: use + " NAME --store URL", Short: short, Args: args(1, 1, "one lease name"),
			RunE: func(c *cobra.Command, argv []string) error { return run(c.Context(), c.Flags(), argv[0]) }}
	}
	acquire := named("acquire", "Take the lease and print its fence", func(ctx context.Context, fl *pflag.FlagSet, name string) error {
		return a.leaseAcquire(ctx, fl, f, name)
	})
	renew := named("renew", "Restart the TTL of a lease this node holds", func(ctx context.Context, fl *pflag.FlagSet, name string) error {
		return a.leaseRewrite(ctx, fl, f, name, false)
	})
	release := named("release", "Release a lease this node holds", func(ctx context.Context, fl *pflag.FlagSet, name string) error {
		return a.leaseRewrite(ctx, fl, f, name, true)
	})
	for _, c := range []*cobra.Command{renew, release} {
		c.Flags().Int64Var(&f.fence, "fence", 0, "only if the lease is still at this fence (the one acquire printed)")
	}
	show := named("show", "Show the lease record and the log's head", func(ctx context.Context, _ *pflag.FlagSet, name string) error {
		return a.leaseShow(ctx, f, name)
	})
	logCmd := named("log", "Show the commit log, newest first", func(ctx context.Context, _ *pflag.FlagSet, name string) error {
		return a.leaseLog(ctx, f, name)
	})
	logCmd.Flags().IntVar(&f.limit, "limit", 0, "at most this many entries (0: all)")
	run := &cobra.Command{Use: "run NAME --store URL [--grace D] -- COMMAND [ARGS]",
		Short: "Run a command while holding the lease",
		Args:  args(2, 1<<20, "a lease name, --, and a command"),
		RunE: func(c *cobra.Command, argv []string) error {
			if c.ArgsLenAtDash() != 1 {
				return usageErr(fmt.Errorf("lease run: want NAME -- COMMAND [ARGS]"))
			}
			return a.leaseRun(c.Context(), c.Flags(), f, argv[0], argv[1:])
		}}
	run.Flags().DurationVar(&f.grace, "grace", 10*time.Second, "after SIGTERM, how long the command may take to exit before SIGKILL")
	addMetricsFile(run.Flags(), &f.metrics)
	watch := &cobra.Command{Use: "watch-group", Hidden: true, Args: cobra.NoArgs,
		Short: "Kill a lease run's command group once the wharf that started it is gone (internal)",
		RunE:  func(c *cobra.Command, _ []string) error { return supervisedErr(supervise.Watch(a.in)) }}
	cmd.AddCommand(acquire, renew, release, show, logCmd, run, watch)
	return cmd
}

// leaseConfig builds the lease config in the one order: the defaults, then the environment
// (WHARF_NODE_ID), then the config file's lease: section, then the flags given.
func (a *app) leaseConfig(fl *pflag.FlagSet) (lease.Config, error) {
	cfg, err := a.leaseSection()
	if err != nil {
		return cfg, err
	}
	if err := yamlflag.Apply(fl, &cfg, &yamlconf.Decoder{Getenv: a.getenv}); err != nil {
		return cfg, usageErr(fmt.Errorf("lease: %w", err))
	}
	return cfg, cfg.Check()
}

// leaseSection is the lease config without flags: the defaults, the environment, the config
// file's lease: section.
func (a *app) leaseSection() (lease.Config, error) {
	cfg := lease.DefaultConfig()
	cfg.FromEnv(a.getenv)
	c, err := a.configFile()
	if err == nil && c != nil && c.file.Lease != nil {
		cfg = *c.file.Lease
	}
	return cfg, err
}

// leaseEnv is what the lease package opens --store with.
func (a *app) leaseEnv(f leaseFlags) (lease.Env, error) {
	if f.store == "" {
		return lease.Env{}, usageErr(fmt.Errorf("lease: --store URL is required (the store that holds the lease)"))
	}
	if _, err := a.configFile(); err != nil {
		return lease.Env{}, err
	}
	return lease.Env{Store: a.storeConfig(nil), Verdicts: a.verdicts(), Logger: a.log}, nil
}

// leaser opens --store and the Leaser over it (probing the store).
func (a *app) leaser(ctx context.Context, fl *pflag.FlagSet, f leaseFlags) (*lease.Leaser, error) {
	cfg, err := a.leaseConfig(fl)
	if err != nil {
		return nil, err
	}
	env, err := a.leaseEnv(f)
	if err != nil {
		return nil, err
	}
	return lease.OpenURL(ctx, f.store, cfg, env)
}

// leaseRun is `lease run`: the lease held while argv runs (see package supervise).
func (a *app) leaseRun(ctx context.Context, fl *pflag.FlagSet, f leaseFlags, name string, argv []string) error {
	l, err := a.leaser(ctx, fl, f)
	if err != nil {
		return err
	}
	defer l.Store().Close()
	mf, err := startMetrics(f.metrics, "lease_run")
	if err != nil {
		return err
	}
	j := mf.Begin(name)
	err = supervise.Run(ctx, l, name, argv, supervise.Options{Grace: f.grace, Stdin: a.in, Stdout: a.out,
		Stderr: a.err, Watcher: []string{"lease", "watch-group"}, Logger: a.log})
	var ee *supervise.ExitError
	switch {
	case err == nil:
		j.Set("exit_code", 0)
	case errors.As(err, &ee):
		j.Set("exit_code", float64(ee.Status))
	}
	_ = j.End(err) // a failure to write shows at the Close
	closeMetrics(mf, &err)
	return supervisedErr(err)
}

// supervisedErr makes supervise's usage errors the command line's.
func supervisedErr(err error) error {
	if errors.Is(err, supervise.ErrUsage) {
		return usageErr(err)
	}
	return err
}

// leaseStore opens --store.
func (a *app) leaseStore(ctx context.Context, f leaseFlags) (*store.Store, error) {
	env, err := a.leaseEnv(f)
	if err != nil {
		return nil, err
	}
	return env.OpenStore(ctx, f.store)
}

// leaseOutcome is what acquire, renew and release print.
type leaseOutcome struct {
	Name     string        `json:"name"`
	Store    string        `json:"store"`
	Mode     string        `json:"mode"`
	Node     string        `json:"node"`
	Fence    int64         `json:"fence"`
	TTL      time.Duration `json:"ttl_ns"`
	Released bool          `json:"released"`
}

func (a *app) leaseAcquire(ctx context.Context, fl *pflag.FlagSet, f leaseFlags, name string) error {
	l, err := a.leaser(ctx, fl, f)
	if err != nil {
		return err
	}
	defer l.Store().Close()
	if l.Mode() == lease.ModeMachine {
		return usageErr(fmt.Errorf("lease acquire: %s is single-writer (%s): its machine lease lasts only as long as one process: use `wharf lease run`", f.store, l.Reason()))
	}
	h, err := l.Acquire(ctx, name)
	if err != nil {
		return err
	}
	c := l.Config()
	return a.leaseReport(leaseOutcome{Name: name, Store: f.store, Mode: l.Mode(), Node: c.Node, Fence: h.Fence(), TTL: c.TTL},
		fmt.Sprintf("acquired %s: node %s, fence %d, TTL %s (renew within %s: wharf lease renew %s --store %s --node %s --fence %d)",
			name, c.Node, h.Fence(), c.TTL, c.TTL-c.Skew, name, f.store, c.Node, h.Fence()))
}

func (a *app) leaseRewrite(ctx context.Context, fl *pflag.FlagSet, f leaseFlags, name string, release bool) error {
	l, err := a.leaser(ctx, fl, f)
	if err != nil {
		return err
	}
	defer l.Store().Close()
	if l.Mode() == lease.ModeMachine {
		return usageErr(fmt.Errorf("lease: %s is single-writer (%s): its machine leases live in one process: use `wharf lease run`", f.store, l.Reason()))
	}
	op, do := "renewed", l.Renew
	if release {
		op, do = "released", l.Release
	}
	rec, err := do(ctx, name, f.fence)
	if err != nil {
		return err
	}
	return a.leaseReport(leaseOutcome{Name: name, Store: f.store, Mode: l.Mode(), Node: rec.Holder, Fence: rec.Fence,
		TTL: rec.TTL(), Released: rec.Released}, fmt.Sprintf("%s %s: node %s, fence %d", op, name, rec.Holder, rec.Fence))
}

func (a *app) leaseReport(o leaseOutcome, line string) error {
	if a.format == "json" {
		return writeJSON(a.out, o)
	}
	if a.quiet {
		_, err := fmt.Fprintln(a.out, o.Fence)
		return err
	}
	_, err := fmt.Fprintln(a.out, line)
	return err
}

func (a *app) leaseShow(ctx context.Context, f leaseFlags, name string) error {
	s, err := a.leaseStore(ctx, f)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := lease.CheckName(name); err != nil {
		return usageErr(err)
	}
	st, err := lease.OpenLog(s, name).State(ctx)
	if err != nil {
		return err
	}
	return a.show(st, st.WriteText)
}

func (a *app) leaseLog(ctx context.Context, f leaseFlags, name string) error {
	if f.limit < 0 {
		return usageErr(fmt.Errorf("lease log: --limit %d: want 0 (all) or more", f.limit))
	}
	if err := lease.CheckName(name); err != nil {
		return usageErr(err)
	}
	s, err := a.leaseStore(ctx, f)
	if err != nil {
		return err
	}
	defer s.Close()
	var tw *tabwriter.Writer
	if a.format != "json" {
		tw = tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SEQ\tFENCE\tNODE\tKIND\tTIME (UTC)\tBYTES\tKEY")
	}
	n := 0
	for e, err := range lease.OpenLog(s, name).Walk(ctx, "") {
		if err != nil {
			return err
		}
		if f.limit > 0 && n == f.limit {
			break
		}
		n++
		if tw == nil {
			if err := writeJSON(a.out, logLine{Entry: e, Key: e.Key}); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\n", e.Seq, e.Fence, e.Node, e.Kind, textfmt.Time(e.Time),
			strconv.Itoa(len(e.Data)), e.Key)
	}
	if tw != nil {
		return tw.Flush()
	}
	return nil
}

// logLine is one entry of `lease log --format json`.
type logLine struct {
	*lease.Entry
	Key string `json:"key"`
}
