package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wharfdata/wharf/dataset"
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
			return a.validatePrefixes(cmd, argv, f, a.reportParts)
		},
	}
	f.add(cmd, "validate every part whole first (sha256, rows, schema, UTF-8)")
	return cmd
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
func (a *app) reportParts(v *dataset.Validation) error {
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
