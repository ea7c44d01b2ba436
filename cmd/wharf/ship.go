package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/ship"
)

func (a *app) shipCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ship [-c wharf.yaml] [--spool DIR --to URL --pipeline P --node N]",
		Short: "Ship a spool's finished files to a bucket, each exactly once, as a service",
		Long: `Run the ship service: upload every file of the spool (see 'wharf spool') to the
destination, oldest first, each under one deterministic key:

  {prefix}/wharf/v1/{pipeline}/{dataset}/date=YYYY-MM-DD/hour=HH/{node}_{epoch}_{first}_{last}.{ext}

with wharf-sha256, wharf-range, wharf-dataset and wharf-node metadata. At start the service
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
nothing is left to ship. A fatal error keeps /healthz at 503 until SIGTERM (with --drain,
the command exits 1 at once).

Logs go to stderr at info level unless --log-level says otherwise: one line per upload with
file_id, dataset, key, size, sha256, outcome, duration and attempt.`,
		Example: `  wharf spool init ./spool
  wharf spool add --spool ./spool --dataset events ./out/events-0001.ndjson.gz
  wharf ship --spool ./spool --to s3://my-bucket/raw --pipeline edge --node gw-17
  wharf ship -c wharf.yaml
  wharf ship -c wharf.yaml --drain --listen off`,
		Args: args(0, 0, "no arguments (use flags or the config file's ship: section)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.shipConfig(cmd.Flags())
			if err != nil {
				return err
			}
			log := a.log
			if !cmd.Flags().Changed("log-level") {
				log = newLogger(a.err, a.format, slog.LevelInfo)
			}
			return a.ship(cmd.Context(), cfg, log)
		},
	}
	registerShipFlags(cmd.Flags())
	return cmd
}

func (a *app) ship(ctx context.Context, cfg ship.Config, log *slog.Logger) error {
	cfg.Store.Logger = log
	s, err := ship.New(cfg, ship.Options{Logger: log.With("component", "ship"), Hooks: shipTestHooks(a.getenv)})
	if err != nil {
		return err
	}
	// The part buffers (upload_concurrency of part_size) are pooled and stay live; a soft
	// limit below the documented bound (their size + 64 MiB) makes the collector reclaim the
	// garbage around them before the heap grows past it, and costs nothing below it.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(cfg.UploadConcurrency)*cfg.PartSize + 40<<20))
	start := time.Now()
	err = s.Run(ctx)
	st := s.Status()
	if err != nil {
		return err
	}
	if a.quiet {
		return nil
	}
	if a.format == "json" {
		return writeJSON(a.out, st)
	}
	fmt.Fprintf(a.out, "ship: %s after %s; %d file(s) uploaded; backlog %d file(s), %s\n",
		st.State, time.Since(start).Round(time.Millisecond), st.Uploaded, st.Backlog.Files, humanSize(st.Backlog.Bytes))
	return nil
}
