package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/wharfdata/wharf/metricsfile"
)

// metricsAt parses the metrics file at path strictly and returns each series' value by
// "name{label=value,…}" of its labels other than job.
func metricsAt(t *testing.T, path string) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	mfs, err := metricsfile.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s is not the exposition format: %v\n%s", path, err, b)
	}
	out := map[string]float64{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				if l.GetName() != "job" {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
			}
			out[name+"{"+strings.Join(labels, ",")+"}"] = gaugeOf(m)
		}
	}
	return out
}

func gaugeOf(m *dto.Metric) float64 { return m.GetGauge().GetValue() }

// hasValue reports whether the series is there with value v.
func hasValue(m map[string]float64, series string, v float64) bool {
	got, ok := m[series]
	return ok && got == v
}

// TestE2EMetricsFile: export, reconcile, lease run and backfill write their metrics files: a success
// with the run's figures and id, then a failure that keeps the last success time and names
// its code; a path that cannot be written fails before the job.
func TestE2EMetricsFile(t *testing.T) {
	cfg := quickstart(t)
	dir := filepath.Dir(cfg)
	prom := filepath.Join(dir, "textfile", "export.prom")
	run := decodeRun(t, wharf(t, "export", "-c", cfg, "--metrics-file", prom, "--format", "json").must(t, 0))
	m := metricsAt(t, prom)
	for series, want := range map[string]float64{"wharf_job_success{name=orders}": 1, "wharf_job_running{name=orders}": 0,
		"wharf_job_rows{name=orders}": float64(run.Rows), "wharf_job_parts{name=orders}": float64(len(run.Parts)),
		"wharf_job_run_info{name=orders,run_id=" + run.RunID + "}": 1} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (%v), want %v; file: %v", series, got, ok, want, m)
		}
	}
	last := m["wharf_job_last_success_timestamp_seconds{name=orders}"]
	if last == 0 {
		t.Fatalf("no last success after a success: %v", m)
	}

	// A table the source lacks: the export fails, and the file keeps the last success.
	broken := filepath.Join(dir, "broken.yaml")
	must(t, os.WriteFile(broken, []byte(strings.Replace(readFile(t, cfg), "table: orders", "table: no_such_table", 1)), 0o644))
	r := wharf(t, "export", "-c", broken, "--metrics-file", prom)
	if r.code == 0 {
		t.Fatal("an export of a missing source succeeded")
	}
	m = metricsAt(t, prom)
	if !hasValue(m, "wharf_job_success{name=orders}", 0) || m["wharf_job_last_success_timestamp_seconds{name=orders}"] != last {
		t.Errorf("after a failure: %v, want success 0 and the last success %v kept", m, last)
	}
	var code string
	for series := range m {
		if rest, ok := strings.CutPrefix(series, "wharf_job_error_info{code="); ok {
			code, _, _ = strings.Cut(rest, ",")
		}
	}
	if !strings.HasPrefix(code, "WHARF_") || !strings.Contains(r.err, code) {
		t.Errorf("the failure's code in the file %q, on stderr %s", code, r.err)
	}

	// reconcile: the verdicts; a row deleted is a mismatch, so no success.
	execSQLite(t, filepath.Join(dir, "quickstart.db"), `DELETE FROM orders WHERE id = 5`)
	rprom := filepath.Join(dir, "textfile", "reconcile.prom")
	wharf(t, "reconcile", "-c", cfg, "--metrics-file", rprom).must(t, 1)
	m = metricsAt(t, rprom)
	if m["wharf_job_mismatched{name=orders}"] != 1 || m["wharf_job_matched{name=orders}"] != 3 || !hasValue(m, "wharf_job_success{name=orders}", 0) ||
		m["wharf_job_error_info{code=WHARF_RECONCILE_MISMATCH,name=orders}"] != 1 {
		t.Errorf("reconcile's file: %v", m)
	}

	// lease run: the command's exit status.
	locks := filepath.Join(dir, "locks")
	must(t, os.MkdirAll(locks, 0o755))
	lprom := filepath.Join(dir, "textfile", "nightly.prom")
	c := cli{dir: dir, env: []string{"WHARF_NODE_ID=host-a"}}
	if r := c.run(t, "lease", "run", "nightly", "--store", locks, "--metrics-file", lprom, "--", "sh", "-c", "exit 3"); r.code != 3 {
		t.Fatalf("lease run of exit 3: exit %d, %s", r.code, r.err)
	}
	m = metricsAt(t, lprom)
	if m["wharf_job_exit_code{name=nightly}"] != 3 || !hasValue(m, "wharf_job_success{name=nightly}", 0) {
		t.Errorf("lease run's file: %v", m)
	}

	// backfill: the records, objects and splits of its run.
	src, lake := filepath.Join(dir, "logs"), filepath.Join(dir, "lake")
	writeFiles(t, dir, map[string]string{"logs/a.ndjson": "{\"i\":1}\n{\"i\":2}\n", "logs/b.ndjson": "{\"i\":3}\n"})
	must(t, os.MkdirAll(lake, 0o755))
	bprom := filepath.Join(dir, "textfile", "backfill.prom")
	wharf(t, backfillArgs(src, lake+"/", "--job", "mf", "--metrics-file", bprom)...).must(t, 0)
	m = metricsAt(t, bprom)
	if !hasValue(m, "wharf_job_records{name=mf}", 3) || !hasValue(m, "wharf_job_objects{name=mf}", 2) || !hasValue(m, "wharf_job_success{name=mf}", 1) {
		t.Errorf("backfill's file: %v", m)
	}

	// Never where the job reads its input or writes its output.
	r = wharf(t, append(backfillArgs(src, lake+"/", "--job", "mf2"), "--metrics-file", filepath.Join(src, "m.prom"))...)
	if r.code != 2 || !strings.Contains(r.err, "lies under the source") {
		t.Errorf("a metrics file in the backfill's source: exit %d, %s", r.code, r.err)
	}
	r = wharf(t, "export", "-c", cfg, "--metrics-file", filepath.Join(dir, "out", "m.prom"))
	if r.code != 2 || !strings.Contains(r.err, "lies under the destination of export orders") {
		t.Errorf("a metrics file in the export's destination: exit %d, %s", r.code, r.err)
	}

	// A path below a file cannot be written: the export does not run.
	r = wharf(t, "export", "-c", cfg, "--metrics-file", filepath.Join(cfg, "x.prom"))
	if r.code != 2 || !strings.Contains(r.err, "metrics file") {
		t.Errorf("an unwritable metrics file: exit %d, %s", r.code, r.err)
	}
}

// TestE2ELogFormat: --log-format json makes every log line one JSON object with time, level
// and msg, whatever the output format; text is slog's text; anything else is a usage error.
func TestE2ELogFormat(t *testing.T) {
	cfg := quickstart(t)
	r := wharf(t, "--log-format", "json", "--log-level", "debug", "export", "-c", cfg).must(t, 0)
	lines := strings.Split(strings.TrimSpace(r.err), "\n")
	if len(lines) < 2 {
		t.Fatalf("debug logs of an export: %q", r.err)
	}
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec["time"] == nil || rec["level"] != "DEBUG" || rec["msg"] == nil {
			t.Fatalf("a log line that is not slog's JSON: %q (%v)", l, err)
		}
	}
	if !strings.Contains(r.out, "orders") || strings.HasPrefix(strings.TrimSpace(r.out), "{") {
		t.Errorf("the output is not the pretty one: %q", r.out)
	}
	r = wharf(t, "--log-format", "text", "--log-level", "debug", "validate", "-c", cfg).must(t, 0)
	if strings.Contains(r.err, "{\"time\"") {
		t.Errorf("text logs in JSON: %q", r.err)
	}
	r = wharf(t, "--log-format", "yaml", "ls", filepath.Dir(cfg))
	if r.code != 2 || !strings.Contains(r.err, "--log-format") {
		t.Errorf("--log-format yaml: exit %d, %s", r.code, r.err)
	}
}

// TestE2EMetricsFileOfAStoppedJob: an export stopped by SIGTERM mid-run is written as failed,
// not running; one killed by SIGKILL cannot write again, and its file says so by an updated
// time that no longer advances while it claims to run.
func TestE2EMetricsFileOfAStoppedJob(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cfg := quickstart(t)
			prom := filepath.Join(filepath.Dir(cfg), "export.prom")
			cmd := cli{env: []string{envTestPause + "=after-part:400ms"}}.command("export", "-c", cfg, "--metrics-file", prom)
			must(t, cmd.Start())
			pollUntil(t, 10*time.Second, "the job's first write", func() bool {
				b, err := os.ReadFile(prom)
				return err == nil && bytes.Contains(b, []byte("wharf_job_running"))
			})
			time.Sleep(200 * time.Millisecond)
			must(t, cmd.Process.Signal(sig))
			_ = cmd.Wait()
			m := metricsAt(t, prom)
			switch sig {
			case syscall.SIGTERM:
				if !hasValue(m, "wharf_job_running{name=orders}", 0) || !hasValue(m, "wharf_job_success{name=orders}", 0) {
					t.Errorf("after SIGTERM: %v", m)
				}
			case syscall.SIGKILL:
				updated := m["wharf_job_updated_timestamp_seconds{name=orders}"]
				if !hasValue(m, "wharf_job_running{name=orders}", 1) || updated == 0 {
					t.Errorf("after SIGKILL: %v", m)
				}
				time.Sleep(1100 * time.Millisecond)
				if again := metricsAt(t, prom)["wharf_job_updated_timestamp_seconds{name=orders}"]; again != updated {
					t.Errorf("a killed job's file was written again: %v then %v", updated, again)
				}
			}
		})
	}
}
