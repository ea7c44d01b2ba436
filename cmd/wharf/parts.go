package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/export"
)

func (a *app) partsCommand() *cobra.Command {
	var f validateFlags
	cmd := &cobra.Command{
		Use:   "parts [URL | -c wharf.yaml [--export NAME] [--date YYYY-MM-DD] [--run-id R] [--prefix P]]",
		Short: "List the parts of a certified dataset, for scripts and query engines",
		Long: `Print the URL of every part that a certified dataset's manifest.json lists, one a line:
exactly the dataset, never an earlier run's parts that stay beside it at the prefix, nor any
other file there. The prefix is validated first (as 'wharf validate' does, --deep to read
every part); a prefix that is not certified prints nothing and exits 1.

The prefix is found as 'wharf validate' finds it: a URL, or each export of a config file
for --date and --run-id, or --prefix.

With --format json each prefix is one line: {"resolved_prefix","export","run_id","rows",
"parts":[{"url","key","chunk","rows","size","sha256"}]}.`,
		Example: `  wharf parts ./examples/out/orders/2026-01-01/
  duckdb -c "SELECT count(*) FROM read_parquet([$(wharf parts -c wharf.yaml --export orders | sed "s/.*/'&'/" | paste -sd,)])"
  wharf parts -c wharf.yaml --export orders --date 2026-01-31 --format json | jq -r '.parts[].url'`,
		Args: args(0, 1, "at most one prefix URL"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if len(argv) == 1 {
				for _, name := range []string{"export", "date", "run-id", "prefix"} {
					if cmd.Flags().Changed(name) {
						return usageErr(fmt.Errorf("parts: --%s goes with a config file, not with a URL", name))
					}
				}
				return a.partsURL(cmd.Context(), argv[0], f.deep)
			}
			return a.partsConfig(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.export, "export", "", "only the export with this name")
	fl.StringVar(&f.date, "date", "", "resolve {date} for this day, YYYY-MM-DD (default: today, UTC)")
	fl.StringVar(&f.runID, "run-id", "", "resolve {run_id} to this run id")
	fl.StringVar(&f.prefix, "prefix", "", "exactly this prefix (one export only)")
	fl.BoolVar(&f.deep, "deep", false, "validate every part whole first (sha256, rows, schema, UTF-8)")
	return cmd
}

func (a *app) partsURL(ctx context.Context, raw string, deep bool) error {
	v, err := a.validateAt(ctx, raw, a.storeConfig(nil), deep)
	if err != nil {
		return err
	}
	return a.reportParts(v)
}

func (a *app) partsConfig(ctx context.Context, f validateFlags) error {
	cfg, err := a.exportsConfig()
	if err != nil {
		return err
	}
	exports, err := cfg.pick(f.export)
	if err != nil {
		return err
	}
	if f.prefix != "" && len(exports) > 1 {
		return usageErr(fmt.Errorf("parts: --prefix names one prefix, and %s has %d exports: add --export NAME", cfg.path, len(exports)))
	}
	day := time.Now().UTC()
	if f.date != "" {
		if day, err = time.Parse(time.DateOnly, f.date); err != nil {
			return usageErr(fmt.Errorf("parts: --date %q: want YYYY-MM-DD", f.date))
		}
	}
	for _, e := range exports {
		prefix, err := a.resolveValidatePrefix(ctx, cfg, e, day, f)
		if err != nil {
			return err
		}
		v, err := a.validateExport(ctx, e, prefix, f.deep)
		if err != nil {
			return fmt.Errorf("parts %s: %w", e.Name, err)
		}
		if err := a.reportParts(v); err != nil {
			return err
		}
	}
	return nil
}

// partsOut is one prefix's line of --format json.
type partsOut struct {
	ResolvedPrefix string     `json:"resolved_prefix"`
	Export         string     `json:"export"`
	RunID          string     `json:"run_id"`
	Rows           int64      `json:"rows"`
	Parts          []partLine `json:"parts"`
}

type partLine struct {
	URL    string `json:"url"`
	Key    string `json:"key"`
	Chunk  int    `json:"chunk"`
	Rows   int64  `json:"rows"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// reportParts prints the parts of a certified prefix, or nothing and ErrNotCertified.
func (a *app) reportParts(v *export.Validation) error {
	if err := v.NotCertified(); err != nil {
		return err
	}
	urls := v.PartURLs(v.ResolvedPrefix)
	if a.format == "json" {
		out := partsOut{ResolvedPrefix: v.ResolvedPrefix, Export: v.Export, RunID: v.RunID, Rows: v.Rows, Parts: []partLine{}}
		for i, p := range v.Manifest.Parts {
			out.Parts = append(out.Parts, partLine{URL: urls[i], Key: p.Key, Chunk: p.Chunk, Rows: p.Rows, Size: p.Size, SHA256: p.SHA256})
		}
		return writeJSON(a.out, out)
	}
	if len(urls) == 0 {
		return nil
	}
	_, err := fmt.Fprintln(a.out, strings.Join(urls, "\n"))
	return err
}
