package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/wharfdata/wharf/internal/bytesize"
	"github.com/wharfdata/wharf/internal/yamlconf"
	"github.com/wharfdata/wharf/ship"
)

// shipFlagKeys maps each flag of `wharf ship` to the key of the ship: section it sets: a
// flag is that key given on the command line, read by the same decoder.
var shipFlagKeys = map[string]string{
	"spool": "spool", "to": "to", "pipeline": "pipeline", "node": "node", "replay": "replay",
	"upload-concurrency": "upload_concurrency", "multipart-threshold": "multipart_threshold",
	"part-size": "part_size", "conditional-put": "conditional_put",
	"retry-initial": "retry.initial", "retry-max": "retry.max", "retry-jitter": "retry.jitter",
	"retention": "local_retention.mode", "keep-for": "local_retention.keep_for",
	"grace": "grace", "poll-interval": "poll_interval", "listen": "listen",
	"listen-remote": "listen_remote", "drain": "drain",
}

// registerShipFlags declares the flags of `wharf ship`, each showing its default.
func registerShipFlags(fl *pflag.FlagSet) {
	d := ship.DefaultConfig()
	fl.String("spool", "", "the spool directory (made by 'wharf spool init DIR')")
	fl.String("to", "", "the destination URL: s3://bucket/prefix, gs://…, az://…, ./dir")
	fl.String("pipeline", "", "the pipeline name, written into every key")
	fl.String("node", "", "this machine's id, written into every key (default: $"+ship.EnvNodeID+")")
	fl.String("replay", "", "ship the replay spool of this replay id, every key under wharf/replays/ID/ (refused on any other spool)")
	fl.Int("upload-concurrency", d.UploadConcurrency, "files uploaded at once (also the parts in flight across all multipart uploads)")
	fl.String("multipart-threshold", bytesize.Format(d.MultipartThreshold), "files above this size go multipart")
	fl.String("part-size", bytesize.Format(d.PartSize), "multipart part size, 5MiB to 5GiB")
	fl.String("conditional-put", string(d.ConditionalPut), "auto, create or overwrite")
	fl.Duration("retry-initial", d.Retry.Initial, "first wait before retrying a file")
	fl.Duration("retry-max", d.Retry.Max, "longest wait between retries of a file")
	fl.Bool("retry-jitter", d.Retry.Jitter, "draw each wait from the upper half of its range")
	fl.String("retention", string(d.Retention.Mode), "local retention: delete_after_upload, keep_for or keep")
	fl.Duration("keep-for", d.Retention.KeepFor, "with --retention keep_for: how long a file stays after its upload")
	fl.Duration("grace", d.Grace, "after SIGTERM, how long uploads in flight may finish")
	fl.Duration("poll-interval", d.PollInterval, "how often the spool's catalog is re-read for new files")
	fl.String("listen", d.Listen, "address of /metrics, /status and /healthz (loopback unless --listen-remote; off for none)")
	fl.Bool("listen-remote", false, "allow a --listen address that is not loopback")
	fl.Bool("drain", false, "exit once nothing is left to ship (a batch run), instead of serving until SIGTERM")
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
	var err error
	fl.Visit(func(f *pflag.Flag) {
		key, ok := shipFlagKeys[f.Name]
		if !ok || err != nil {
			return
		}
		if e := dec.DecodeKey(&cfg, key, f.Value.String(), "--"+f.Name); e != nil {
			err = usageErr(fmt.Errorf("ship: %w", e))
		}
	})
	if err != nil {
		return ship.Config{}, err
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
