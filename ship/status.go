package ship

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/listen"
	"github.com/wharfdata/wharf/internal/statuspage"
	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
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
	Component   string    `json:"component"` // "ship"
	State       string    `json:"state"`
	Started     time.Time `json:"started"`
	Spool       string    `json:"spool"`
	Epoch       string    `json:"epoch"` // 16 hex digits, as in the keys
	Destination string    `json:"destination,omitempty"`
	Pipeline    string    `json:"pipeline"`
	Node        string    `json:"node"`
	Replay      string    `json:"replay,omitempty"` // the replay shipped: keys under wharf/replays/{replay}/
	// Health is ok, unhealthy (unhealthyAfter attempts in a row failed in a way no retry
	// fixes without an operator: refused credentials, a full spool, a missing bucket) or
	// fatal; /healthz answers 503 unless it is ok.
	Health         string        `json:"health"`
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
	// RecentErrors are the last errors (up to recentErrors), oldest first; LastError is the
	// last of them.
	RecentErrors []ErrorInfo `json:"recent_errors"`
	// Tables are the Iceberg tables of Config.Iceberg's datasets.
	Tables []TableStatus `json:"tables,omitempty"`
}

// recentErrors is how many errors /status and the status page keep.
const recentErrors = 10

// The health of the service, as Status.Health and /healthz give it.
const (
	HealthOK        = "ok"
	HealthUnhealthy = "unhealthy"
	HealthFatal     = "fatal"
)

// unhealthyAfter is how many attempts in a row (probes, uploads, records) must fail with an
// error that needs an operator before the service reports itself unhealthy.
const unhealthyAfter = 3

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
	// ClockSkewSeconds is, for a request the store refused for its time
	// (store.ErrClockSkewed), the store's clock less this machine's, as the answer showed it.
	ClockSkewSeconds float64 `json:"clock_skew_seconds,omitempty"`
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
	inflight     map[uint64]spool.File
	retaining    map[uint64]bool // files whose local retention is under way, after their attempt
	retry        map[uint64]*retryState
	uploaded     int64
	lastErr      *ErrorInfo
	recent       []ErrorInfo // the last recentErrors errors, oldest first
	fatal        *ErrorInfo
	fatalErr     error
	sp           Spool // the spool once opened, for the metrics
	// standing counts the attempts in a row that failed with an error that needs an operator
	// (needsOperator); any success resets it.
	standing int
}

// needsOperator reports whether err is a failure that retrying does not fix until someone
// acts, its class errcode.Operator: refused or missing credentials, permissions, a missing
// bucket, a full spool, uploads that keep arriving damaged.
func needsOperator(err error) bool { return errcode.ClassOf(err) == errcode.Operator }

// clockSkew returns the skew between the store's clock and this machine's that a refusal for
// the request's time (store.ErrClockSkewed) showed, rounded to the second.
func clockSkew(err error) (time.Duration, bool) {
	var se *store.SkewError
	if !errors.Is(err, store.ErrClockSkewed) || !errors.As(err, &se) || se.Skew() == 0 {
		return 0, false
	}
	return se.Skew().Round(time.Second), true
}

// warnClock logs a warning naming the measured skew when err is a refusal for the request's
// time: a clock to sync, not credentials to fix. The attempt is retried like an outage.
func (s *Shipper) warnClock(err error) {
	if !errors.Is(err, store.ErrClockSkewed) {
		return
	}
	d, ok := clockSkew(err)
	msg := "the store refused the time this machine signed its request with; sync this machine's clock (NTP): retrying meanwhile"
	if !ok {
		s.log.Warn("clock skew", "to", s.loc, "warning", msg)
		return
	}
	s.log.Warn("clock skew", "to", s.loc, "clock_skew_seconds", d.Seconds(), "warning",
		fmt.Sprintf("the store's clock is %+.0f s from this machine's: %s", d.Seconds(), msg))
}

// openedSpool returns the spool once Run opened it, else nil.
func (s *Shipper) openedSpool() Spool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stat.sp
}

// failedLocked records a failed attempt (s.mu held): the last error, and whether it adds to
// the failures that make the service unhealthy.
func (s *Shipper) failedLocked(info *ErrorInfo, err error) {
	if d, ok := clockSkew(err); ok {
		info.ClockSkewSeconds = d.Seconds()
	}
	s.noteLocked(info)
	if needsOperator(err) {
		s.stat.standing++
	} else {
		s.stat.standing = 0
	}
}

func (s *Shipper) healthLocked() string {
	switch {
	case s.stat.fatal != nil:
		return HealthFatal
	case s.stat.standing >= unhealthyAfter:
		return HealthUnhealthy
	}
	return HealthOK
}

// Status returns the service's state now.
func (s *Shipper) Status() Status {
	now := s.now()
	s.mu.Lock()
	st := Status{Component: "ship", State: s.stateLocked(), Health: s.healthLocked(), Started: s.stat.started.UTC(), Spool: s.cfg.Spool,
		Epoch: s.stat.epoch, Destination: s.stat.dest, Pipeline: s.cfg.Pipeline, Node: s.cfg.Node, Replay: s.cfg.Replay,
		ConditionalPut: s.cfg.ConditionalPut, PutMode: s.stat.mode, Probe: s.stat.probe,
		InFlight: len(s.stat.inflight), Retrying: len(s.stat.retry), RetryAge: s.retryAgeLocked(now).Seconds(),
		Uploaded: s.stat.uploaded, LastError: s.stat.lastErr, Fatal: s.stat.fatal, RecentErrors: append([]ErrorInfo{}, s.stat.recent...)}
	sp := s.stat.sp
	s.mu.Unlock()
	if sp != nil {
		// The spool's own count: the catalog as last read (every poll interval, in every
		// state), with the service's records applied as they are written.
		st.Backlog.Files, st.Backlog.Bytes, st.Backlog.Oldest = sp.Waiting()
	}
	st.Tables = s.tab.status()
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
	s.stat.fatalErr, s.stat.fatal = err, info
	s.noteLocked(info)
}

// noteLocked records info as the last error (s.mu held).
func (s *Shipper) noteLocked(info *ErrorInfo) {
	s.stat.lastErr = info
	if len(s.stat.recent) == recentErrors {
		s.stat.recent = append(s.stat.recent[:0], s.stat.recent[1:]...)
	}
	s.stat.recent = append(s.stat.recent, *info)
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

// Handler serves the status page at / (HTML, the figures of /status), /metrics
// (Prometheus), /status (JSON) and /healthz: 200 "ok: STATE" while the
// service is healthy (probing, shipping or retrying included); 503 "unhealthy: STATE: ERROR
// [CODE]" once unhealthyAfter attempts in a row failed with an error that needs an operator
// (back to 200 at the next success); 503 "fatal: ERROR [CODE]" once shipping stopped.
func (s *Shipper) Handler() http.Handler {
	mux := listen.Mux(s.m.reg, func() any { return s.Status() }, s.health)
	mux.Handle("GET /{$}", statuspage.Handler(s.page))
	return mux
}

// health is what /healthz answers.
func (s *Shipper) health() (int, string) {
	st := s.Status()
	switch {
	case st.Fatal != nil:
		return http.StatusServiceUnavailable, fmt.Sprintf("fatal: %s [%s]", st.Fatal.Message, st.Fatal.Code)
	case st.Health == HealthUnhealthy && st.LastError != nil:
		return http.StatusServiceUnavailable, fmt.Sprintf("unhealthy: %s: %s [%s]", st.State, st.LastError.Message, st.LastError.Code)
	case st.LastError != nil && st.LastError.Code == store.ErrClockSkewed.Code() && st.State != StateShipping:
		// Healthy (a clock to sync is retried like an outage), and degraded: say why.
		return http.StatusOK, fmt.Sprintf("ok: %s; degraded: the store refuses this machine's clock (%+.0f s) [%s]",
			st.State, st.LastError.ClockSkewSeconds, st.LastError.Code)
	}
	return http.StatusOK, "ok: " + st.State
}

// metrics are the service's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg     *prometheus.Registry
	uploads *prometheus.CounterVec
	bytes   prometheus.Counter
	seconds prometheus.Histogram
	aborted prometheus.Counter
	// collisions counts the objects found at a file's key with other content
	// (ErrObjectKeyCollision): each one stops shipping for good.
	collisions prometheus.Counter
	// shipped meters the bytes shipped (outcome ok) for the status page's chart.
	shipped *statuspage.Meter
	now     func() time.Time
}

// spoolCollector reports the spool's files and bytes by state as the service's spool holds
// them at the moment of the scrape (the catalog as last read, with the service's own
// records applied at once).
type spoolCollector struct {
	s           *Shipper
	files, size *prometheus.Desc
}

func (c *spoolCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.files; ch <- c.size }

func (c *spoolCollector) Collect(ch chan<- prometheus.Metric) {
	var st spool.Stats
	if sp := c.s.openedSpool(); sp != nil {
		st = sp.Stats()
	}
	for _, state := range spool.States {
		n := st.Of(state)
		ch <- prometheus.MustNewConstMetric(c.files, prometheus.GaugeValue, float64(n.Files), state.String())
		ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(n.Bytes), state.String())
	}
}

func newMetrics(s *Shipper) *metrics {
	m := &metrics{
		shipped: statuspage.NewMeter(10*time.Second, 30), now: s.now,
		reg: prometheus.NewRegistry(),
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wharf_ship_uploads_total",
			Help: "Upload attempts by outcome: ok, conflict_equal (already there, same content), retry, fatal."}, []string{"outcome"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "wharf_ship_bytes_total",
			Help: "Bytes of files the service wrote to the store (outcome ok)."}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "wharf_ship_upload_seconds",
			Help:    "Duration of successful uploads, from the first request to the spool's record.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 16)}),
		aborted: prometheus.NewCounter(prometheus.CounterOpts{Name: "wharf_ship_stale_uploads_aborted_total",
			Help: "Incomplete multipart uploads that an earlier run left at a key the service was about to write, aborted."}),
		collisions: prometheus.NewCounter(prometheus.CounterOpts{Name: "wharf_ship_collisions_total",
			Help: "Objects found at a file's key with other content (WHARF_OBJECT_KEY_COLLISION: another spool or machine uses this epoch or node id); each stops shipping for good."}),
	}
	spoolStats := &spoolCollector{s: s,
		files: prometheus.NewDesc("wharf_spool_files", "Files in the spool by state: finalized, eligible (waiting), uploaded (retained), deleted.", []string{"state"}, nil),
		size:  prometheus.NewDesc("wharf_spool_bytes", "Bytes of the files in the spool by state.", []string{"state"}, nil)}
	retryAge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wharf_ship_retry_age_seconds",
		Help: "How long the oldest file now waiting for a retry (or the startup probe) has been failing; 0 when none is."},
		func() float64 {
			now := s.now()
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.retryAgeLocked(now).Seconds()
		})
	status := func(name, help string, f func(st Status) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return f(s.Status()) })
	}
	healthy := status("wharf_ship_healthy", "1 while /healthz answers 200 (health ok), 0 while the service is unhealthy or fatal.",
		func(st Status) float64 { return b2f(st.Health == HealthOK) })
	oldest := status("wharf_ship_backlog_oldest_age_seconds", "Age of the oldest file waiting to be shipped (its event time), 0 when none waits.",
		func(st Status) float64 { return st.Backlog.OldestAge })
	skew := status("wharf_ship_clock_skew_seconds", "The store's clock less this machine's, as the last probe or a request the store refused for its time measured it.",
		func(st Status) float64 { return st.clockSkew() })
	for _, o := range []string{OutcomeOK, OutcomeConflictEqual, OutcomeRetry, OutcomeFatal} {
		m.uploads.WithLabelValues(o)
	}
	m.reg.MustRegister(m.uploads, m.bytes, m.seconds, m.aborted, m.collisions, retryAge, healthy, oldest, skew, spoolStats,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// clockSkew is the store's clock less this machine's: from the last error when the store
// refused a request for its time, else from the probe.
func (st Status) clockSkew() float64 {
	if st.LastError != nil && st.LastError.ClockSkewSeconds != 0 {
		return st.LastError.ClockSkewSeconds
	}
	if st.Probe != nil {
		return st.Probe.ClockSkewSeconds
	}
	return 0
}

func (m *metrics) outcome(o string) { m.uploads.WithLabelValues(o).Inc() }

func (m *metrics) uploaded(outcome string, size int64, d time.Duration) {
	m.outcome(outcome)
	if outcome == OutcomeOK {
		m.bytes.Add(float64(size))
		m.shipped.Add(m.now(), float64(size))
	}
	m.seconds.Observe(d.Seconds())
}
