package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/internal/yamlconf"
	"github.com/wharfdata/wharf/internal/yamlconf/yamlflag"
	"github.com/wharfdata/wharf/ship"
)

func (a *app) shipCommand() *cobra.Command {
	var logLevel string
	cmd := &cobra.Command{
		Use:   "ship [-c wharf.yaml] [--spool DIR --to URL --pipeline P --node N]",
		Short: "Ship a spool's finished files to a bucket, each exactly once, as a service",
		Long: `Run the ship service: upload every file of the spool (see 'wharf spool') to the
destination, oldest first, each under one deterministic key:

  {prefix}/wharf/v1/{pipeline}/{dataset}/date=YYYY-MM-DD/hour=HH/{node}_{epoch}_{first}_{last}.{ext}

with wharf-sha256, wharf-range, wharf-dataset and wharf-node metadata. A file whose clock was
not synchronized when it was added (see 'wharf spool add --clock-synced') goes under
{dataset}/unsynced/ instead of date=/hour=. A replay spool ('wharf spool init --replay ID')
ships only with --replay ID, and then every key is under {prefix}/wharf/replays/ID/v1/…,
never beside production's; a replay spool without --replay, or --replay on any other spool,
is refused before anything is shipped (WHARF_REPLAY_INTO_PRODUCTION, WHARF_REPLAY_MISMATCH). At start the service
probes the store: with conditional_put auto it sends create-if-absent puts where the store
enforces them, and otherwise plain puts checked by HEAD before and after. An object already
at a key is verified by size and sha256: the same content is success, other content stops
shipping with WHARF_OBJECT_KEY_COLLISION (a spool epoch or node id used twice). A failed
upload is retried with backoff, without limit. Only after the spool records an upload does
local retention apply (delete_after_upload, keep_for, keep): a file never uploaded is never
deleted.

Every key of the config file's ship: section is also a flag, so the service runs without a
file. /metrics (Prometheus), /status (JSON) and /healthz are served on --listen (loopback).
SIGTERM or Ctrl-C stops taking files, lets uploads in flight finish for --grace, and exits
0; a restart resumes from the spool's catalog. With --drain the service exits 0 once
nothing is left to ship. /healthz answers 503 once the service is unhealthy (three
attempts in a row refused for credentials, a missing bucket, a full spool or uploads that
keep arriving cut short: it recovers by itself once they succeed) or fatal (it stays so until SIGTERM; with --drain, the command
exits 1 at once). A full spool disk does not stop the service: it ships, records and
removes files in the catalog's reserve, and retries a record it cannot write.
A store that refuses this machine's clock (WHARF_CLOCK_SKEWED) is retried like an outage:
/healthz stays 200 and says it is degraded, and a warning names the skew.

With --iceberg-datasets (iceberg.datasets), the Parquet files of those datasets are also
committed to an Apache Iceberg table per dataset, at {to}/wharf/v1/{pipeline}/{dataset}/,
in group commits (--iceberg-commit-files, --iceberg-commit-interval): each file in exactly
one snapshot across crashes, checked against the table; local retention waits for the
commit. The store must be proven cas. 'wharf table show URL' reads a table.

Before a large file is sent again after a restart, the multipart uploads an earlier run
left open at its key are aborted ('wharf uploads' lists and aborts others).

Logs go to stderr at info level unless --log-level says otherwise: one line per upload with
file_id, dataset, key, size, sha256, outcome, duration and attempt.`,
		Example: `  wharf spool init ./spool
  wharf spool add --spool ./spool --dataset events ./out/events-0001.ndjson.gz
  wharf ship --spool ./spool --to s3://my-bucket/raw --pipeline edge --node gw-17
  wharf ship -c wharf.yaml
  wharf ship -c wharf.yaml --drain --listen off
  wharf ship -c wharf.yaml --iceberg-datasets events`,
		Args: args(0, 0, "no arguments (use flags or the config file's ship: section)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil || !validLevel(logLevel) {
				return usageErr(fmt.Errorf("ship: --log-level %q: want debug, info, warn or error", logLevel))
			}
			cfg, err := a.shipConfig(cmd.Flags())
			if err != nil {
				return err
			}
			return a.ship(cmd.Context(), cfg, newLogger(a.err, a.logFormat, level))
		},
	}
	yamlflag.Add(cmd.Flags(), ship.DefaultConfig()) // a flag per key of the ship: section
	// The service logs each upload at info: its own --log-level, whose default the help shows,
	// stands in for the global one (same name, same values).
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level on stderr: debug, info, warn or error")
	return cmd
}

func (a *app) ship(ctx context.Context, cfg ship.Config, log *slog.Logger) error {
	cfg.Store.Logger = log
	cfg.Store.Wrap = shipTestWrap(a.getenv)
	s, err := ship.New(cfg, ship.Options{Logger: log.With("component", "ship"), Hooks: shipTestHooks(a.getenv)})
	if err != nil {
		return err
	}
	defer a.limitMemory(cfg.MemoryBound())()
	start := time.Now()
	err = s.Run(ctx)
	st := s.Status()
	// The summary comes after a fatal error too (before the error's own line): what is left
	// to ship is what an operator asks first.
	switch {
	case a.quiet:
	case a.format == "json":
		if werr := writeJSON(a.out, st); err == nil {
			err = werr
		}
	default:
		state := st.State
		if st.Fatal != nil {
			state = "fatal"
		}
		fmt.Fprintf(a.out, "ship: %s after %s; %d file(s) uploaded; backlog %d file(s), %s\n",
			state, time.Since(start).Round(time.Millisecond), st.Uploaded, st.Backlog.Files, textfmt.Size(st.Backlog.Bytes))
		for _, t := range st.Tables {
			fmt.Fprintf(a.out, "table %s: %d file(s) committed, %d waiting, %d left out; version %d: wharf table show %s\n",
				t.Dataset, t.Committed, t.Waiting, t.Rejected, t.Version, shellPrefix(t.Location))
		}
	}
	return err
}

// shipConfig builds the service's config in the one order: the defaults, then the
// environment (WHARF_NODE_ID), then the config file's ship: section, then the flags given.
func (a *app) shipConfig(fl *pflag.FlagSet) (ship.Config, error) {
	cfg := ship.DefaultConfig()
	cfg.FromEnv(a.getenv)
	where := "ship"
	dec := &yamlconf.Decoder{Getenv: a.getenv}
	if a.configPath != "" {
		c, err := a.configFile()
		if err != nil {
			return ship.Config{}, err
		}
		if c.file.Ship == nil {
			return ship.Config{}, configErr(&yamlconf.Error{File: c.path, Msg: "no ship: section"})
		}
		cfg = *c.file.Ship
		cfg.Rebase(c.dir)
		where = c.path + ": ship"
	}
	if err := yamlflag.Apply(fl, &cfg, dec); err != nil {
		return ship.Config{}, usageErr(fmt.Errorf("ship: %w", err))
	}
	if wd, werr := os.Getwd(); werr == nil {
		cfg.Rebase(wd) // paths given as flags are relative to the working directory
	}
	cfg.Store = *a.storeConfig(&cfg.Store)
	if err := cfg.Check(); err != nil {
		return ship.Config{}, fmt.Errorf("%s: %w", where, err)
	}
	return cfg, nil
}
