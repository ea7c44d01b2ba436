package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
)

// streams are the process's standard streams; tests substitute their own.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// app holds the global flags and what every command shares. Nothing here is global state:
// run builds a fresh app per invocation.
type app struct {
	streams
	getenv func(string) string

	format     string // "pretty" or "json"
	quiet      bool
	logLevel   string
	logFormat  string // "", text or json: the logs' format ("": json under --format json, else text)
	endpoint   string
	profile    string
	region     string
	anonymous  bool
	configPath string // --config

	// The config file --config names, read at most once (configFile).
	cfg     *config
	cfgErr  error
	cfgRead bool

	log *slog.Logger
	// started is set once flags and arguments are parsed: an error before it is a usage error.
	started bool
}

// run executes one wharf invocation and returns its exit code.
func run(ctx context.Context, args []string, s streams, getenv func(string) string) int {
	a := &app{streams: s, getenv: getenv, format: "pretty"}
	root := a.rootCommand()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil && !a.started {
		err = usageErr(err)
		if jsonAsked(args) {
			a.format = "json" // cobra refused before parsing flags (an unknown command)
		}
	}
	return a.exit(ctx, err)
}

// jsonAsked reports whether args ask for --format json, read by hand for the failures cobra
// reports before it parses any flag.
func jsonAsked(args []string) bool {
	for i, arg := range args {
		switch {
		case arg == "--":
			return false
		case arg == "--format=json", arg == "--format" && i+1 < len(args) && args[i+1] == "json":
			return true
		}
	}
	return false
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "wharf",
		Short: "Move data between pipelines and object storage",
		Long: `wharf moves data between pipelines and object storage with contracts a downstream
system can trust. Its jobs: export writes database tables as verified Parquet datasets
(export, validate, reconcile, repair, load, parts, runs); ship uploads a spool's finished files to a bucket, each
exactly once (spool, ship); backfill reads every object under a prefix as NDJSON records,
across a fleet of workers (backfill); lease keeps fenced leases and a commit log in a store
and runs a command while holding one (lease); table shows an Iceberg table whose catalog is the
bucket (table). Its object tools (ls, du, cat, stat, mb, rb, cp, mv,
sync, rm, presign, probe, uploads) work the same on every store; version and completion print the version and
shell completions.

A store is named by a URL; everything after the bucket is the key, byte for byte:

  ./dir, /abs/dir, file:///abs/dir   the local filesystem (one meaning: see docs/cli.md)
  s3://bucket/key                    AWS S3 and S3-compatible stores (MinIO, SeaweedFS, Ceph…)
  r2://account-id/bucket/key         Cloudflare R2
  gs://bucket/key                    Google Cloud Storage
  az://account/container/key         Azure Blob Storage
  mem://name/key                     an in-process store (lives as long as the command)
  - or stdout://                     standard output (a write-only destination)
  NAME://bucket/key                  a store named under stores: in the config file (-c)

A store's options (endpoint, region, credential references) come from flags, the config
file (-c) or each cloud's conventional environment, never from the URL. S3 credentials come
from the AWS SDK's default chain (AWS_ACCESS_KEY_ID, profiles, SSO, instance roles), as with
the AWS CLI. Every failure prints one line ending in a stable code such as
[WHARF_NOT_FOUND]; docs/errors.md explains each one.`,
		Example: `  wharf export -c examples/quickstart.yaml
  wharf ls -r ./examples/data
  wharf probe ./examples/data
  wharf cp ./report.csv s3://my-bucket/reports/
  wharf --endpoint http://127.0.0.1:9000 ls s3://my-bucket/`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		PersistentPreRunE: a.setup,
	}
	root.SetIn(a.in)
	root.SetOut(a.out)
	root.SetErr(a.err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr(fmt.Errorf("%s%w (see '%s --help')", subcommand(c), err, c.CommandPath()))
	})
	root.CompletionOptions.HiddenDefaultCmd = false
	// wharf --version prints what wharf version prints. Not cobra's Version: its custom
	// template would link text/template's method lookup, which costs the binary 15 MiB.
	var showVersion bool
	root.Flags().BoolVarP(&showVersion, "version", "v", false, "print wharf's version, commit and Go version (as 'wharf version')")
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if showVersion {
			_, err := fmt.Fprintln(a.out, buildVersion().text())
			return err
		}
		return cmd.Help()
	}
	f := root.PersistentFlags()
	f.StringVar(&a.format, "format", "pretty", "output format: pretty or json")
	f.BoolVarP(&a.quiet, "quiet", "q", false, "print only what was asked for (no progress or confirmations)")
	f.StringVar(&a.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn or error")
	f.StringVar(&a.logFormat, "log-format", "", "log format on stderr: text or json (slog's handlers; default json with --format json, else text)")
	f.StringVar(&a.endpoint, "endpoint", "", "store endpoint URL (https://host:port; http only on loopback)")
	f.StringVar(&a.endpoint, "endpoint-url", "", "the same as --endpoint, as aws-cli spells it")
	f.StringVar(&a.profile, "profile", "", "the AWS configuration profile an S3 store reads (default: AWS_PROFILE, else default)")
	f.StringVar(&a.region, "region", "", "store region (default: AWS_REGION, AWS_DEFAULT_REGION)")
	f.BoolVar(&a.anonymous, "anonymous", false, "send no credentials (public buckets, emulators)")
	f.StringVarP(&a.configPath, "config", "c", "", "the config file: its stores and endpoint_allowlist serve every command (export, validate and runs read wharf.yaml without it)")
	objectTools := []*cobra.Command{a.lsCommand(), a.duCommand(), a.catCommand(), a.statCommand(),
		a.mbCommand(), a.rbCommand(), a.cpCommand(), a.mvCommand(), a.syncCommand(), a.rmCommand(), a.presignCommand(), a.probeCommand()}
	a.completeURLs(objectTools...)
	root.AddCommand(a.versionCommand())
	root.AddCommand(objectTools...)
	root.AddCommand(a.exportCommand(), a.validateCommand(), a.reconcileCommand(), a.repairCommand(), a.loadCommand(), a.runsCommand())
	root.AddCommand(a.partsCommand())
	root.AddCommand(a.tableCommand())
	root.AddCommand(a.spoolCommand())
	root.AddCommand(a.shipCommand())
	root.AddCommand(a.backfillCommand())
	root.AddCommand(a.leaseCommand())
	root.AddCommand(a.uploadsCommand())
	return root
}

// setup runs after flags and arguments are parsed: it checks the global flags and builds the
// logger that every command passes down.
func (a *app) setup(cmd *cobra.Command, _ []string) error {
	if a.format != "pretty" && a.format != "json" {
		return usageErr(fmt.Errorf("--format %q: want pretty or json", a.format))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(a.logLevel)); err != nil || !validLevel(a.logLevel) {
		return usageErr(fmt.Errorf("--log-level %q: want debug, info, warn or error", a.logLevel))
	}
	switch a.logFormat {
	case "":
		a.logFormat = "text"
		if a.format == "json" {
			a.logFormat = "json"
		}
	case "text", "json":
	default:
		return usageErr(fmt.Errorf("--log-format %q: want text or json", a.logFormat))
	}
	a.log = newLogger(a.err, a.logFormat, level)
	a.started = true
	return nil
}

func validLevel(s string) bool {
	switch strings.ToLower(s) {
	case "debug", "info", "warn", "error":
		return true
	}
	return false
}

// newLogger is the logger of every command: format json (slog's JSON handler) or text.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// args returns a cobra argument check that names what the command expects.
func args(min, max int, want string) cobra.PositionalArgs {
	return func(c *cobra.Command, got []string) error {
		if len(got) < min || len(got) > max {
			return usageErr(fmt.Errorf("%swant %s, got %d argument(s) (see '%s --help')",
				subcommand(c), want, len(got), c.CommandPath()))
		}
		return nil
	}
}

// subcommand is "ls: " for `wharf ls`, and "" for wharf itself: the prefix of a usage message
// that printError already starts with "wharf: ".
func subcommand(c *cobra.Command) string {
	if !c.HasParent() {
		return ""
	}
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ") + ": "
}
