package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"github.com/wharfdata/wharf/internal/textfmt"
)

// Set at build time: go build -ldflags "-X main.version=v1.2.3 -X main.commit=abc123
// -X main.date=2026-12-04T05:00:00Z" (scripts/release.sh).
var (
	version = "dev"
	commit  = ""
	date    = ""
)

type versionInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"date,omitempty"` // when the release was built (UTC); "" for a plain go build
	Go      string `json:"go"`
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print wharf's version, commit and Go version",
		Long: `Print the version of this wharf binary, the commit it was built from, when it was
built (a release build) and the Go release that built it. A binary built from a git checkout without a version stamp reports
"dev" and the commit recorded by the Go toolchain (with "-dirty" when the tree had changes).`,
		Example: `  wharf version
  wharf version --format json`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := buildVersion()
			if a.format == "json" {
				return writeJSON(a.out, v)
			}
			_, err := fmt.Fprintln(a.out, v.text())
			return err
		},
	}
}

// text is the line `wharf version` and `wharf --version` print.
func (v versionInfo) text() string {
	if v.Date != "" {
		return fmt.Sprintf("wharf %s (commit %s, built %s, %s)", v.Version, textfmt.Dash(v.Commit), v.Date, v.Go)
	}
	return fmt.Sprintf("wharf %s (commit %s, %s)", v.Version, textfmt.Dash(v.Commit), v.Go)
}

func buildVersion() versionInfo {
	v := versionInfo{Version: version, Commit: commit, Date: date, Go: runtime.Version()}
	if v.Commit != "" {
		return v
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && v.Commit != "" {
		v.Commit += "-dirty"
	}
	return v
}
