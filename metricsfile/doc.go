// Package metricsfile writes a batch job's figures as a Prometheus metrics file, for
// node_exporter's textfile collector: what `--metrics-file PATH` of export, load, reconcile,
// backfill and lease run writes.
//
// # What it promises
//
// One file holds every job of one command (each export of a `wharf export`). It is in the
// Prometheus text exposition format, and it is always whole: each write
// goes to a temporary file in the same directory (whose name does not end in .prom, so the
// collector never reads it) and is renamed over PATH, so a reader sees the previous file or
// the new one, never a part. It is written when the command starts (then empty), when each
// job begins (wharf_job_running 1) and ends (with its outcome), every Every in between (5 s
// by default), and at Close, which ends a job still running as failed. A process killed
// outright (SIGKILL) writes nothing more: its file keeps wharf_job_running 1 with an
// updated time that no longer advances, which is how a reader tells it from a live job.
//
// Every series has the labels job (the kind: export, load, reconcile, lease_run, backfill) and name
// (what ran: the export's name, the lease's). The series:
//
//	wharf_job_running                        1 while the job runs, 0 once it ended
//	wharf_job_start_timestamp_seconds        when it started (Unix time)
//	wharf_job_duration_seconds               how long it ran, or has been running
//	wharf_job_updated_timestamp_seconds      when the file was last written for it
//	wharf_job_success                        1 if it succeeded, 0 if it failed (once ended)
//	wharf_job_last_success_timestamp_seconds when the job last succeeded
//	wharf_job_<figure>                       the job's figures: rows, bytes, parts, chunks…
//	wharf_job_run_info{run_id}               1, naming the run (export, load)
//	wharf_job_error_info{code}               1, naming the WHARF_ code of a failure (or unclassified)
//
// wharf_job_last_success_timestamp_seconds survives a failure: a job that fails carries the
// time from the file it replaces (the previous run's), so an alert on "no success in N
// hours" keeps its clock; a file that holds none (a first run that failed) has no such series.
// Labels never hold a secret: a name, a run id and a code.
package metricsfile
