package ship

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store/probe"
)

// The states of the service, as /status names them.
const (
	StateStarting = "starting" // opening the spool and the store
	StateProbing  = "probing"  // the startup probe (repeated while the store cannot be reached)
	StateShipping = "shipping" // uploading, or waiting for files
	StateRetrying = "retrying" // shipping, and at least one file is waiting to be retried
	StateStopping = "stopping" // told to stop: uploads in flight get the grace period
	StateStopped  = "stopped"
	StateFatal    = "fatal" // shipping stopped for good; Status.Fatal says why
)

// Status is the service's state, as /status serves it (JSON).
type Status struct {
	Component      string        `json:"component"` // "ship"
	State          string        `json:"state"`
	Started        time.Time     `json:"started"`
	Spool          string        `json:"spool"`
	Epoch          string        `json:"epoch"` // 16 hex digits, as in the keys
	Destination    string        `json:"destination,omitempty"`
	Pipeline       string        `json:"pipeline"`
	Node           string        `json:"node"`
	ConditionalPut PutMode       `json:"conditional_put"`    // as configured
	PutMode        PutMode       `json:"put_mode,omitempty"` // as decided from the probe: create or overwrite
	Probe          *probe.Result `json:"probe,omitempty"`
	Backlog        Backlog       `json:"backlog"`
	InFlight       int           `json:"in_flight"`
	Retrying       int           `json:"retrying"`          // files waiting for a retry
	RetryAge       float64       `json:"retry_age_seconds"` // how long the oldest of them (or the probe) has been failing
	Uploaded       int64         `json:"uploaded"`          // files shipped since the start
	LastError      *ErrorInfo    `json:"last_error,omitempty"`
	Fatal          *ErrorInfo    `json:"fatal,omitempty"`
}

// Backlog is what waits to be shipped.
type Backlog struct {
	Files int64 `json:"files"`
	Bytes int64 `json:"bytes"`
	// OldestAge is the age of the oldest waiting file's time (its event time), in seconds.
	OldestAge float64   `json:"oldest_age_seconds"`
	Oldest    time.Time `json:"oldest,omitzero"`
}

// ErrorInfo is an error as /status shows it.
type ErrorInfo struct {
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
	Code    string    `json:"code,omitempty"`
	FileID  uint64    `json:"file_id,omitempty"`
	Key     string    `json:"key,omitempty"`
}

// status is the mutable state behind Status, guarded by Shipper.mu.
type status struct {
	state        string
	started      time.Time
	epoch        string
	dest         string
	probe        *probe.Result
	mode         PutMode
	probeFailing time.Time // when the probe started failing; zero once it succeeded
	backlog      backlog
	inflight     map[uint64]spool.File
	retaining    map[uint64]bool // files whose local retention is under way, after their attempt
	retry        map[uint64]*retryState
	uploaded     int64
	lastErr      *ErrorInfo
	fatal        *ErrorInfo
	fatalErr     error
}

type backlog struct {
	files, bytes int64
	oldest       time.Time
}

// Status returns the service's state now.
func (s *Shipper) Status() Status {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Component: "ship", State: s.stateLocked(), Started: s.stat.started.UTC(), Spool: s.cfg.Spool,
		Epoch: s.stat.epoch, Destination: s.stat.dest, Pipeline: s.cfg.Pipeline, Node: s.cfg.Node,
		ConditionalPut: s.cfg.ConditionalPut, PutMode: s.stat.mode, Probe: s.stat.probe,
		Backlog:  Backlog{Files: s.stat.backlog.files, Bytes: s.stat.backlog.bytes, Oldest: s.stat.backlog.oldest},
		InFlight: len(s.stat.inflight), Retrying: len(s.stat.retry), RetryAge: s.retryAgeLocked(now).Seconds(),
		Uploaded: s.stat.uploaded, LastError: s.stat.lastErr, Fatal: s.stat.fatal}
	if !st.Backlog.Oldest.IsZero() {
		st.Backlog.OldestAge = max(now.Sub(st.Backlog.Oldest).Seconds(), 0)
	}
	return st
}

func (s *Shipper) stateLocked() string {
	switch {
	case s.stat.fatal != nil:
		return StateFatal
	case s.stat.state == StateShipping && len(s.stat.retry) > 0:
		return StateRetrying
	}
	return s.stat.state
}

func (s *Shipper) state() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stateLocked()
}

func (s *Shipper) setState(st string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stat.state = st
}

// setFatal records the error that stopped shipping (the first one wins).
func (s *Shipper) setFatal(err error, f spool.File, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stat.fatalErr != nil {
		return
	}
	info := &ErrorInfo{Time: s.now().UTC(), Message: err.Error(), Code: errcode.NameOf(err), FileID: f.ID}
	if key != "" {
		info.Key = s.where(key)
	}
	s.stat.fatalErr, s.stat.fatal, s.stat.lastErr = err, info, info
}

func (s *Shipper) fatalErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stat.fatalErr
}

// retryAgeLocked is how long the oldest failing work has been failing: a file waiting for a
// retry, or the startup probe.
func (s *Shipper) retryAgeLocked(now time.Time) time.Duration {
	var oldest time.Time
	if !s.stat.probeFailing.IsZero() {
		oldest = s.stat.probeFailing
	}
	for _, rs := range s.stat.retry {
		if oldest.IsZero() || rs.since.Before(oldest) {
			oldest = rs.since
		}
	}
	if oldest.IsZero() {
		return 0
	}
	return max(now.Sub(oldest), 0)
}

// Handler serves /metrics (Prometheus), /status (JSON) and /healthz (200 "ok", or 503 with
// the fatal error once shipping stopped).
func (s *Shipper) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s.Status())
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		st := s.Status()
		if st.Fatal != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "fatal: %s [%s]\n", st.Fatal.Message, st.Fatal.Code)
			return
		}
		fmt.Fprintf(w, "ok: %s\n", st.State)
	})
	return mux
}

// metrics are the service's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg     *prometheus.Registry
	uploads *prometheus.CounterVec
	bytes   prometheus.Counter
	seconds prometheus.Histogram
	files   *prometheus.GaugeVec
	size    *prometheus.GaugeVec
}

func newMetrics(s *Shipper) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wharf_ship_uploads_total",
			Help: "Upload attempts by outcome: ok, conflict_equal (already there, same content), retry, fatal."}, []string{"outcome"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "wharf_ship_bytes_total",
			Help: "Bytes of files the service wrote to the store (outcome ok)."}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "wharf_ship_upload_seconds",
			Help:    "Duration of successful uploads, from the first request to the spool's record.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 16)}),
		files: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "wharf_spool_files",
			Help: "Files in the spool by state: finalized, eligible (waiting), uploaded (retained), deleted."}, []string{"state"}),
		size: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "wharf_spool_bytes",
			Help: "Bytes of the files in the spool by state."}, []string{"state"}),
	}
	retryAge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wharf_ship_retry_age_seconds",
		Help: "How long the oldest file now waiting for a retry (or the startup probe) has been failing; 0 when none is."},
		func() float64 {
			now := s.now()
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.retryAgeLocked(now).Seconds()
		})
	for _, o := range []string{OutcomeOK, OutcomeConflictEqual, OutcomeRetry, OutcomeFatal} {
		m.uploads.WithLabelValues(o)
	}
	for _, st := range spool.States {
		m.files.WithLabelValues(st.String())
		m.size.WithLabelValues(st.String())
	}
	m.reg.MustRegister(m.uploads, m.bytes, m.seconds, retryAge, m.files, m.size,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) outcome(o string) { m.uploads.WithLabelValues(o).Inc() }

func (m *metrics) uploaded(outcome string, size int64, d time.Duration) {
	m.outcome(outcome)
	if outcome == OutcomeOK {
		m.bytes.Add(float64(size))
	}
	m.seconds.Observe(d.Seconds())
}

func (m *metrics) spoolStats(st spool.Stats) {
	for _, state := range spool.States {
		c := st.Of(state)
		m.files.WithLabelValues(state.String()).Set(float64(c.Files))
		m.size.WithLabelValues(state.String()).Set(float64(c.Bytes))
	}
}
