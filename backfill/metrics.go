package backfill

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/wharfdata/wharf/internal/statuspage"
)

// metrics are one worker's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg         *prometheus.Registry
	records     prometheus.Counter
	bytesRead   prometheus.Counter
	bytesOut    prometheus.Counter
	splits      prometheus.Counter
	failed      *prometheus.CounterVec
	quarantined prometheus.Counter
	// objectsQuarantined counts the objects this worker quarantined.
	objectsQuarantined prometheus.Counter
	commits            prometheus.Counter
	leaseLost          prometheus.Counter
	// delivered meters the records this worker handed to the sink, for the status page.
	delivered *statuspage.Meter
}

func newMetrics(j *Job) *metrics {
	m := &metrics{
		delivered: statuspage.NewMeter(10*time.Second, 30),
		reg:       prometheus.NewRegistry(),
		records: prometheus.NewCounter(prometheus.CounterOpts{Name: "wharf_backfill_records_total",
			Help: "Records this worker handed to the sink (a replayed record counts again)."}),
		bytesRead: prometheus.NewCounter(prometheus.CounterOpts{Name: "wharf_backfill_read_bytes_total",
			Help: "Bytes this worker read from the source store (compressed, as stored)."}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{Name: "wharf_backfill_record_bytes_total",
			Help: "Bytes of the records this worker handed to the sink (decompressed, newlines included)."}),
		splits: prometheus.NewCounter(prometheus.CounterOpts{Name: "wharf_backfill_splits_done_total",
			Help: "Splits this worker read to the end and committed done."}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wharf_backfill_objects_failed_total",
			Help: "Objects that failed their split, by reason: deleted, overwritten, corrupt, unreadable."}, []string{"reason"}),
		quarantined: prometheus.NewCounter(prometheus.CounterOpts{Name: "wharf_backfill_splits_quarantined_total",
			Help: "Splits this worker finished without their quarantined objects (every other member delivered)."}),
		objectsQuarantined: prometheus.NewCounter(prometheus.CounterOpts{Name: "wharf_backfill_objects_quarantined_total",
			Help: "Objects this worker quarantined after max_attempts failures: their splits go on without them."}),
		commits: prometheus.NewCounter(prometheus.CounterOpts{Name: "wharf_backfill_commits_total",
			Help: "Watermark commits this worker made."}),
		leaseLost: prometheus.NewCounter(prometheus.CounterOpts{Name: "wharf_backfill_leases_lost_total",
			Help: "Splits another worker took over from this one (it had stalled for lease_ttl)."}),
	}
	for _, r := range Reasons {
		m.failed.WithLabelValues(r)
	}
	gauge := func(name, help string, f func(s Status) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return f(j.Status()) })
	}
	m.reg.MustRegister(m.records, m.bytesRead, m.bytesOut, m.splits, m.failed, m.quarantined, m.objectsQuarantined, m.commits, m.leaseLost,
		gauge("wharf_backfill_splits_planned", "Splits in the job's plan.", func(s Status) float64 { return float64(s.Splits.Planned) }),
		gauge("wharf_backfill_splits_final", "Splits of the plan this worker knows to be done or quarantined.", func(s Status) float64 { return float64(s.Splits.Done + s.Splits.Quarantined) }),
		gauge("wharf_backfill_healthy", "1 while /healthz answers 200, 0 once this worker failed.", func(s Status) float64 {
			if s.State == StateFailed {
				return 0
			}
			return 1
		}),
		gauge("wharf_backfill_splits_in_flight", "Splits this worker is reading now.", func(s Status) float64 { return float64(len(s.InFlight)) }),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) read(n int64) { m.bytesRead.Add(float64(n)) }

func (m *metrics) decoded(bytes int64, records int) {
	m.bytesOut.Add(float64(bytes))
	m.records.Add(float64(records))
}

func (m *metrics) splitDone(*Split, int64) { m.splits.Inc() }

func (m *metrics) objectFailed(reason string) { m.failed.WithLabelValues(reason).Inc() }
