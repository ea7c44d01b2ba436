package statuspage

import (
	"sync"
	"time"
)

// Meter sums a quantity in time slots of Step and keeps the last N of them, for the page's
// throughput chart. It is safe for concurrent use; the zero value is not usable (NewMeter).
type Meter struct {
	mu    sync.Mutex
	step  time.Duration
	slots []float64 // a ring: slots[i%len] is slot i
	last  int64     // the slot index of the latest Add or Rates
}

// NewMeter returns a meter of the last n slots of step each (n*step is the chart's span).
func NewMeter(step time.Duration, n int) *Meter {
	return &Meter{step: step, slots: make([]float64, max(n, 1))}
}

func (m *Meter) slot(t time.Time) int64 { return t.UnixNano() / int64(m.step) }

// advance moves the ring to slot i, zeroing the slots it skips (m.mu held).
func (m *Meter) advance(i int64) {
	if i <= m.last {
		return
	}
	n := int64(len(m.slots))
	for j := max(m.last+1, i-n+1); j <= i; j++ {
		m.slots[j%n] = 0
	}
	m.last = i
}

// Add counts v at time now.
func (m *Meter) Add(now time.Time, v float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.slot(now)
	if m.last == 0 {
		m.last = i
	}
	m.advance(i)
	if i <= m.last-int64(len(m.slots)) {
		return // older than the ring
	}
	m.slots[i%int64(len(m.slots))] += v
}

// Rates returns the per-second rate of each of the last n slots, oldest first, the one now is
// in last. That one is still filling and is divided by a whole step too: its bar grows to its
// rate rather than jumping at a slot's start.
func (m *Meter) Rates(now time.Time) []float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.slot(now)
	if m.last == 0 {
		m.last = i
	}
	m.advance(i)
	size := int64(len(m.slots))
	out := make([]float64, size)
	for k := range size {
		out[k] = m.slots[(i-size+1+k)%size] / m.step.Seconds()
	}
	return out
}

// Span is the time the meter's slots cover.
func (m *Meter) Span() time.Duration { return m.step * time.Duration(len(m.slots)) }

// Step is the length of one slot.
func (m *Meter) Step() time.Duration { return m.step }
