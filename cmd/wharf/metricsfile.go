package main

import (
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
