package metricsfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/wharfdata/wharf/errcode"
)

var errTest = errcode.New(errcode.Def{Name: "WHARF_TEST_METRICSFILE", Text: "a test failure", Exit: errcode.ExitFailed,
	Class: errcode.Fatal, Section: "Test", Meaning: "test only", Remedy: "none"})

func read(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not the exposition format: %v\n%s", err, b)
	}
	return mfs
}

func value(t *testing.T, mfs map[string]*dto.MetricFamily, name string) (float64, bool) {
	t.Helper()
	mf := mfs[name]
	if mf == nil || len(mf.GetMetric()) != 1 {
		return 0, false
	}
	m := mf.GetMetric()[0]
	if label(m, "job") != "export" || label(m, "name") != "orders" {
		t.Errorf("%s: labels %v", name, m.GetLabel())
	}
	return m.GetGauge().GetValue(), true
}

// TestJobFile: a run's file says it is running, then holds its figures, run id and outcome;
// a later failed run keeps the last success time and names its code.
func TestJobFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "textfile", "wharf-export-orders.prom")
	clock := time.Unix(1_800_000_000, 0)
	now := func() time.Time { return clock }
	f, err := Start(path, "export", &Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if mfs := read(t, path); len(mfs) != 0 {
		t.Errorf("before a job began: %v", mfs)
	}
	j := f.Begin("orders")
	mfs := read(t, path)
	if v, ok := value(t, mfs, "wharf_job_running"); !ok || v != 1 {
		t.Errorf("running %v %v", v, ok)
	}
	if _, ok := mfs["wharf_job_success"]; ok {
		t.Error("a running job has an outcome")
	}
	j.Set("rows", 1000)
	j.Set("parts", 4)
	j.SetRunID("20260101T000000Z-abcdef")
	clock = clock.Add(90 * time.Second)
	if err := j.End(nil); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(nil); err != nil {
		t.Fatal(err)
	}
	mfs = read(t, path)
	for name, want := range map[string]float64{"wharf_job_running": 0, "wharf_job_success": 1, "wharf_job_rows": 1000,
		"wharf_job_parts": 4, "wharf_job_duration_seconds": 90, "wharf_job_last_success_timestamp_seconds": 1_800_000_090,
		"wharf_job_start_timestamp_seconds": 1_800_000_000} {
		if v, ok := value(t, mfs, name); !ok || v != want {
			t.Errorf("%s = %v (%v), want %v", name, v, ok, want)
		}
	}
	if m := mfs["wharf_job_run_info"].GetMetric(); len(m) != 1 || label(m[0], "run_id") != "20260101T000000Z-abcdef" {
		t.Errorf("run info %v", m)
	}

	clock = clock.Add(time.Hour)
	f, err = Start(path, "export", &Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	f.Begin("orders")
	if err := f.Close(fmt.Errorf("export orders: %w", errcode.E("run", "x", errTest, errors.New("boom")))); err != nil {
		t.Fatal(err)
	}
	mfs = read(t, path)
	if v, _ := value(t, mfs, "wharf_job_success"); v != 0 {
		t.Error("a failed run succeeded")
	}
	if v, ok := value(t, mfs, "wharf_job_last_success_timestamp_seconds"); !ok || v != 1_800_000_090 {
		t.Errorf("a failed run's last success %v %v, want the earlier run's", v, ok)
	}
	if m := mfs["wharf_job_error_info"].GetMetric(); len(m) != 1 || label(m[0], "code") != "WHARF_TEST_METRICSFILE" {
		t.Errorf("error info %v", m)
	}
	if _, ok := mfs["wharf_job_run_info"]; ok {
		t.Error("the failed run names a run it did not make")
	}
	if err := f.Close(nil); err != nil {
		t.Error("a second Close wrote again", err)
	}
}

// TestFileIsReplacedWhole: a reader racing a file rewritten every millisecond only ever
// reads a whole file (every series there, and parsable); no temporary file is left.
func TestFileIsReplacedWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "job.prom")
	f, err := Start(path, "export", &Options{Every: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	j := f.Begin("orders")
	for i := range 200 {
		j.Set(fmt.Sprintf("figure_%03d", i), float64(i))
	}
	if err := j.End(nil); err != nil { // written with every figure: each write from now on has them all
		t.Fatal(err)
	}
	var reads atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Error(err)
				return
			}
			mfs, err := Parse(bytes.NewReader(b))
			if err != nil || mfs["wharf_job_running"] == nil || mfs["wharf_job_figure_199"] == nil {
				t.Errorf("a partial file (%v): %d bytes", err, len(b))
				return
			}
			reads.Add(1)
		}
	})
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	if err := f.Close(nil); err != nil {
		t.Fatal(err)
	}
	if reads.Load() < 10 {
		t.Errorf("only %d reads raced the writes", reads.Load())
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Errorf("the directory holds %v (%v), want the file alone", entries, err)
	}
}

// TestStartFailsOnAnUnwritablePath: a path that cannot be written fails Start, before the job.
func TestStartFailsOnAnUnwritablePath(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(filepath.Join(file, "job.prom"), "export", nil); err == nil {
		t.Error("a file below a file was written")
	}
}
