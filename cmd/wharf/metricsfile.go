package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wharfdata/wharf/metricsfile"
)

// addMetricsFile adds --metrics-file, the batch jobs' metrics file, to fl.
func addMetricsFile(fl *pflag.FlagSet, path *string) {
	fl.StringVar(path, "metrics-file", "", "write the job's metrics to this file, replaced whole at its start, every 5 s and at its end (Prometheus text format, for node_exporter's textfile collector; docs/operations.md)")
}

// startMetrics opens the metrics file at path for jobs of kind, or returns nil (which does
// nothing) when path is empty.
func startMetrics(path, kind string) (*metricsfile.File, error) {
	if path == "" {
		return nil, nil
	}
	f, err := metricsfile.Start(path, kind, nil)
	if err != nil {
		return nil, usageErr(err)
	}
	return f, nil
}

// closeMetrics closes f, ending what still runs with *err; a failure to write it becomes
// *err only when the command itself succeeded (its own failure is the one to report).
func closeMetrics(f *metricsfile.File, err *error) {
	if cerr := f.Close(*err); cerr != nil && *err == nil {
		*err = cerr
	}
}

// localPrefix is the path a listing of the local URL u reads under, as a byte prefix (a
// trailing / kept), or "" when u is not on the local filesystem.
func localPrefix(u string) string {
	path, ok := strings.CutPrefix(u, "file://")
	if !ok && strings.Contains(u, "://") {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	if strings.HasSuffix(path, "/") && !strings.HasSuffix(abs, "/") {
		abs += "/"
	}
	return abs
}

// refuseBeside refuses a metrics file that lies under the local prefix of url, where the job
// reads its input or writes its output (what names it): a listing would read the file, or a
// resume quarantine it. A store URL is never a local path: nothing to refuse.
func refuseBeside(metrics, what, url string) error {
	in := localPrefix(url)
	if metrics == "" || in == "" {
		return nil
	}
	m, err := filepath.Abs(metrics)
	if err != nil || !strings.HasPrefix(m, in) {
		return nil
	}
	return usageErr(fmt.Errorf("--metrics-file %s lies under the %s %s, which the job reads or writes: give a path outside it", metrics, what, url))
}
