package metricsfile

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wharfdata/wharf/errcode"
)

// DefaultEvery is how often a running job's file is written.
const DefaultEvery = 5 * time.Second

// File is a metrics file of one command's jobs of one kind (the exports of one `wharf export`),
// from Start to Close. A nil *File, and the nil *Job its Begin returns, do nothing: a command
// without --metrics-file calls them all the same.
type File struct {
	path, kind string
	now        func() time.Time
	last       map[string]float64 // by name: the last success time the replaced file held

	mu     sync.Mutex
	jobs   []*Job
	closed bool
	stop   chan struct{}
	done   chan struct{}
}

// Job is one job of a File, from Begin to End.
type Job struct {
	f       *File
	name    string
	start   time.Time
	end     time.Time // zero while running
	err     error
	figures map[string]float64
	runID   string
}

// Options tune Start; the zero value is the default.
type Options struct {
	Every time.Duration    // 0 is DefaultEvery
	Now   func() time.Time // nil is time.Now
}

// figureName is what a figure may be called: wharf_job_<figure> must be a metric name.
func figureName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Start opens the metrics file at path for jobs of kind (export, load, reconcile,
// lease_run), and writes it every o.Every until Close. The file it replaces gives each job's
// last success time. A path that cannot be written fails here, before any job begins.
func Start(path, kind string, o *Options) (*File, error) {
	if o == nil {
		o = &Options{}
	}
	f := &File{path: path, kind: kind, now: o.Now, stop: make(chan struct{}), done: make(chan struct{})}
	if f.now == nil {
		f.now = time.Now
	}
	last, err := lastSuccess(path, kind)
	if err != nil {
		return nil, err
	}
	f.last = last
	if err := f.write(); err != nil {
		return nil, err
	}
	every := o.Every
	if every <= 0 {
		every = DefaultEvery
	}
	go func() {
		defer close(f.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-f.stop:
				return
			case <-t.C:
				_ = f.write() // a failure shows at Close, whose write is the one that counts
			}
		}
	}()
	return f, nil
}

// Begin starts the job name, running from now, and writes the file.
func (f *File) Begin(name string) *Job {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	j := &Job{f: f, name: name, start: f.now(), figures: map[string]float64{}}
	f.jobs = append(f.jobs, j)
	f.mu.Unlock()
	_ = f.write()
	return j
}

// Set sets a figure (rows, bytes, parts, records…: lower case, digits and _), written as
// wharf_job_<figure>.
func (j *Job) Set(figure string, v float64) {
	if j == nil {
		return
	}
	j.f.mu.Lock()
	defer j.f.mu.Unlock()
	j.figures[figure] = v
}

// SetRunID names the run (wharf_job_run_info).
func (j *Job) SetRunID(id string) {
	if j == nil {
		return
	}
	j.f.mu.Lock()
	defer j.f.mu.Unlock()
	j.runID = id
}

// End ends the job with its outcome (nil: a success, whose time becomes its last success;
// any other error a failure, named by its WHARF_ code) and writes the file.
func (j *Job) End(err error) error {
	if j == nil {
		return nil
	}
	f := j.f
	f.mu.Lock()
	if !j.end.IsZero() {
		f.mu.Unlock()
		return nil
	}
	j.end, j.err = f.now(), err
	if err == nil {
		f.last[j.name] = float64(j.end.UnixNano()) / 1e9
	}
	f.mu.Unlock()
	return f.write()
}

// Close stops the periodic writes and writes the file once more; a job not ended is ended
// with err (nil: an interrupted job is not a success, so a job still running is a failure
// then). It returns an error when that write fails.
func (f *File) Close(err error) error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	now := f.now()
	for _, j := range f.jobs {
		if j.end.IsZero() {
			j.end, j.err = now, err
			if j.err == nil {
				j.err = errors.New("the command ended before the job")
			}
		}
	}
	f.mu.Unlock()
	close(f.stop)
	<-f.done
	return f.write()
}

// write writes the file as it is now.
func (f *File) write() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	reg := prometheus.NewPedanticRegistry()
	vec := map[string]*prometheus.GaugeVec{}
	gauge := func(name, help string, j *Job, v float64, extra ...string) {
		keys := []string{"job", "name"}
		vals := []string{f.kind, j.name}
		for i := 0; i+1 < len(extra); i += 2 {
			keys, vals = append(keys, extra[i]), append(vals, extra[i+1])
		}
		g := vec[name]
		if g == nil {
			g = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, keys)
			vec[name] = g
			reg.MustRegister(g)
		}
		g.WithLabelValues(vals...).Set(v)
	}
	for _, j := range f.jobs {
		gauge("wharf_job_updated_timestamp_seconds", "When this file was last written for the job: a job still running whose file stops being rewritten (every 5 s) was killed.", j, float64(now.UnixNano())/1e9)
		running, end := 1.0, now
		if !j.end.IsZero() {
			running, end = 0, j.end
		}
		gauge("wharf_job_running", "1 while the job runs, 0 once it ended.", j, running)
		gauge("wharf_job_start_timestamp_seconds", "When the job started, in seconds since the Unix epoch.", j, float64(j.start.UnixNano())/1e9)
		gauge("wharf_job_duration_seconds", "How long the job ran, or has been running.", j, end.Sub(j.start).Seconds())
		if !j.end.IsZero() {
			ok := 0.0
			if j.err == nil {
				ok = 1
			}
			gauge("wharf_job_success", "1 if the job succeeded, 0 if it failed.", j, ok)
		}
		if last := f.last[j.name]; last > 0 {
			gauge("wharf_job_last_success_timestamp_seconds", "When the job last succeeded, in seconds since the Unix epoch.", j, last)
		}
		for _, name := range slices.Sorted(maps.Keys(j.figures)) {
			if figureName(name) {
				gauge("wharf_job_"+name, fmt.Sprintf("The job's %s.", strings.ReplaceAll(name, "_", " ")), j, j.figures[name])
			}
		}
		if j.runID != "" {
			gauge("wharf_job_run_info", "The run the job made, by its id.", j, 1, "run_id", j.runID)
		}
		if j.err != nil {
			code := "unclassified"
			if c := errcode.Of(j.err); c != nil {
				code = c.Name()
			}
			gauge("wharf_job_error_info", "The code of the job's failure.", j, 1, "code", code)
		}
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		return fmt.Errorf("metrics file %s: %w", f.path, err)
	}
	if err := prometheus.WriteToTextfile(f.path, reg); err != nil {
		return fmt.Errorf("metrics file %s: %w", f.path, err)
	}
	return nil
}

// lastSuccess reads the last success time of each job of kind from the metrics file at path
// (none when there is no file, or it is not one of wharf's).
func lastSuccess(path, kind string) (map[string]float64, error) {
	out := map[string]float64{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("metrics file %s: %w", path, err)
	}
	defer f.Close()
	mfs, err := Parse(f)
	if err != nil {
		return out, nil // not a file of ours: it is replaced, and nothing is carried over
	}
	for _, m := range mfs["wharf_job_last_success_timestamp_seconds"].GetMetric() {
		if label(m, "job") == kind {
			out[label(m, "name")] = m.GetGauge().GetValue()
		}
	}
	return out, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Parse reads a metrics file strictly (the text exposition format, legacy metric names).
func Parse(r interface{ Read([]byte) (int, error) }) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	return p.TextToMetricFamilies(r)
}
