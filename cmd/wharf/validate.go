package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/store"
)

type validateFlags struct {
	export, date, runID, prefix string
	deep, strict                bool
}

func (a *app) validateCommand() *cobra.Command {
	var f validateFlags
	cmd := &cobra.Command{
		Use:   "validate [URL | -c wharf.yaml [--export NAME] [--date YYYY-MM-DD] [--run-id R] [--prefix P]]",
		Short: "Certify an exported dataset without touching its source",
		Long: `Check that a prefix holds a whole export, reading only the store: _SUCCESS must hold the
sha256 of manifest.json's bytes, the manifest must record a succeeded run, and every part it
lists must be there at its recorded size and ETag (one HEAD per part; in a local directory,
whose ETags do not prove content, every part is re-hashed too). --deep also reads every part
whole on every store: compares its sha256, and decodes every row as a reader would, checking
its row count and schema against the manifest and that every string is valid UTF-8. The
source database is never queried.

With a URL, that prefix is checked, whoever wrote it. With a config file, each export's
destination is resolved for --date (default: today, UTC) and --run-id (default for a
{run_id} destination: the export's last run in the journal), or --prefix names the exact
prefix to check (one export only).

A prefix with no manifest.json that holds something else (one written by Spark or Hadoop
with an empty _SUCCESS) is a legacy run: reported legacy_run: true, not certified, and not a
failure (exit 0; --strict exits 1). A prefix holding nothing at all, or only wharf's parts of
a run killed before its manifest, is not a legacy run: exit 1. The resolved prefix is always
printed. With a config file, the verdict on a run the journal holds (certified or
not_certified, as "validate" or "validate --deep") is recorded as the run's last
verification, which 'wharf runs' shows (not under state: bucket). Exit 0: certified, or a
legacy run; 1: not certified, each problem named, or unreadable (a missing bucket is
WHARF_VERIFY_MANIFEST_READ_ERROR, never "legacy").`,
		Example: `  wharf validate ./examples/out/orders/2026-01-01/
  wharf validate -c examples/quickstart.yaml
  wharf validate -c wharf.yaml --export orders --date 2026-01-31 --deep
  wharf validate --strict ./spark-output/
  wharf --endpoint http://127.0.0.1:9000 validate --format json s3://lake/orders/2026-01-31/`,
		Args: args(0, 1, "at most one prefix URL"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.validatePrefixes(cmd, argv, f, func(v *dataset.Validation) error { return a.reportValidation(v, f.strict) })
		},
	}
	f.add(cmd, "also read and decode every part: sha256, rows, schema, UTF-8")
	cmd.Flags().BoolVar(&f.strict, "strict", false, "exit 1 for a legacy run too (a prefix without manifest.json), not only for a prefix that is not certified")
	return cmd
}

// add gives cmd the flags that select the prefixes to validate, and --deep.
func (f *validateFlags) add(cmd *cobra.Command, deep string) {
	f.addSelect(cmd, "resolve {run_id} to this run id")
	cmd.Flags().BoolVar(&f.deep, "deep", false, deep)
}

// addSelect gives cmd the flags that select the exports' prefixes: --export, --date,
// --run-id (runID is its help) and --prefix.
func (f *validateFlags) addSelect(cmd *cobra.Command, runID string) {
	fl := cmd.Flags()
	fl.StringVar(&f.export, "export", "", "only the export with this name")
	fl.StringVar(&f.date, "date", "", "resolve {date} for this day, YYYY-MM-DD (default: today, UTC)")
	fl.StringVar(&f.runID, "run-id", "", runID)
	fl.StringVar(&f.prefix, "prefix", "", "exactly this prefix (one export only)")
}

// validatePrefixes validates the prefix argv names, with the global store options, or each
// export's prefix of the config file as f selects it, and hands each result to report (which
// returns ErrNotCertified for a prefix that is not). It goes through every prefix and returns
// the first failure.
func (a *app) validatePrefixes(cmd *cobra.Command, argv []string, f validateFlags, report func(*dataset.Validation) error) error {
	ctx, verb := cmd.Context(), cmd.Name()
	if len(argv) == 1 {
		for _, name := range []string{"export", "date", "run-id", "prefix"} {
			if cmd.Flags().Changed(name) {
				return usageErr(fmt.Errorf("%s: --%s goes with a config file, not with a URL", verb, name))
			}
		}
		v, err := a.validateAt(ctx, argv[0], a.storeConfig(nil), f.deep)
		if err != nil {
			return err
		}
		return report(v)
	}
	return a.validateConfig(ctx, verb, f, report)
}

// validateAt opens the store at loc and validates it. A store option mistake keeps its own
// code (exit 2); anything that keeps the prefix from being read is
// WHARF_VERIFY_MANIFEST_READ_ERROR.
func (a *app) validateAt(ctx context.Context, raw string, cfg *store.Config, deep bool) (*dataset.Validation, error) {
	loc, err := cfg.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	s, err := store.OpenLocation(ctx, loc, cfg)
	if err != nil {
		if c := errcode.Of(err); c != nil && c.Exit() == errcode.ExitUsage {
			return nil, err
		}
		return nil, errcode.E("validate", loc.String(), dataset.ErrVerifyManifestRead, err)
	}
	defer s.Close()
	return dataset.Validate(ctx, s, displayPrefix(loc.String()), deep, dataset.StoreOpener(cfg))
}

// validateConfig validates each export's prefix as f selects it (eachPrefix). 'wharf
// validate' also records each validation of a run in the journal ('wharf parts' only reads).
func (a *app) validateConfig(ctx context.Context, verb string, f validateFlags, report func(*dataset.Validation) error) error {
	var failed error
	err := a.eachPrefix(ctx, verb, f, func(h export.History, e *export.Export, prefix string) error {
		v, err := a.validateAt(ctx, prefix, &e.Store, f.deep)
		if err != nil {
			return fmt.Errorf("%s %s: %w", verb, e.Name, err)
		}
		if err := report(v); err != nil && failed == nil {
			failed = err
		}
		if verb == "validate" && !v.LegacyRun {
			if err := recordVerification(ctx, h, e, v.RunID, validated(v)); err != nil {
				return fmt.Errorf("%s %s: %w", verb, e.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return failed
}

// eachPrefix resolves, for each export of the config file that f selects, the prefix to
// check (--prefix, or the destination for --date and --run-id, whose default for a {run_id}
// destination is the export's last run) and hands it to check, with the history of the
// config's state. It goes through every export unless one fails to resolve or check fails.
func (a *app) eachPrefix(ctx context.Context, verb string, f validateFlags, check func(h export.History, e *export.Export, prefix string) error) error {
	cfg, err := a.exportsConfig()
	if err != nil {
		return err
	}
	exports, err := cfg.pick(f.export)
	if err != nil {
		return err
	}
	if f.prefix != "" && len(exports) > 1 {
		return usageErr(fmt.Errorf("%s: --prefix names one prefix, and %s has %d exports: add --export NAME", verb, cfg.path, len(exports)))
	}
	day := time.Now().UTC()
	if f.date != "" {
		if day, err = time.Parse(time.DateOnly, f.date); err != nil {
			return usageErr(fmt.Errorf("%s: --date %q: want YYYY-MM-DD", verb, f.date))
		}
	}
	for i := range exports {
		e := &exports[i]
		prefix := f.prefix
		if prefix == "" {
			if prefix, err = resolvePrefix(ctx, verb, cfg, e, day, f.runID); err != nil {
				return err
			}
		}
		if err := check(cfg.history(), e, prefix); err != nil {
			return err
		}
	}
	return nil
}

// resolvePrefix is the export's destination for day and runID (default for a {run_id}
// destination: the export's last run).
func resolvePrefix(ctx context.Context, verb string, cfg *config, e *export.Export, day time.Time, runID string) (string, error) {
	if runID == "" && export.UsesRunID(e.Destination) {
		last, err := cfg.history().LastRun(ctx, e)
		if err != nil {
			return "", err
		}
		if last == nil {
			return "", usageErr(fmt.Errorf("%s: the destination of %s has {run_id} and the journal has no run of it: give --run-id", verb, e.Name))
		}
		runID = last.RunID
	}
	p, err := export.ResolvePrefix(e, day, runID)
	if err != nil {
		return "", usageErr(fmt.Errorf("%s %s: %w", verb, e.Name, err))
	}
	return p, nil
}

// reportValidation prints v, and returns ErrNotCertified when it is not certified, except for
// a legacy run, which the contract (M6) reports without certifying and without failing,
// unless strict.
func (a *app) reportValidation(v *dataset.Validation, strict bool) error {
	if err := a.show(v, textOf(v.Text)); err != nil {
		return err
	}
	if v.LegacyRun && !strict {
		return nil
	}
	return v.NotCertified()
}
