package lease

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/mem"
	"github.com/wharfdata/wharf/store/probe"
)

// fakeClock is one machine's clock. Time passes only when Advance is called or someone
// sleeps: Sleep advances the clock by what it was asked to wait (and first runs onSleep, so a
// test can act "while" a contender waits).
type fakeClock struct {
	mu      sync.Mutex
	wall    time.Time
	mono    time.Duration
	onSleep func(d time.Duration)
	timers  []*fakeTimer
}

// fakeTimer is an AfterFunc of a fakeClock: it runs, in the goroutine that moves the clock
// past its time, once the clock is there.
type fakeTimer struct {
	at      time.Duration
	f       func()
	stopped bool
}

func newClock(wall time.Time) *fakeClock { return &fakeClock{wall: wall} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall.Add(c.mono)
}

func (c *fakeClock) Mono() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mono
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.mono += d
	c.mu.Unlock()
	c.fire()
}

// fire runs the timers that are due, outside the clock's lock.
func (c *fakeClock) fire() {
	c.mu.Lock()
	var due []*fakeTimer
	rest := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case t.at <= c.mono:
			t.stopped = true
			due = append(due, t)
		default:
			rest = append(rest, t)
		}
	}
	c.timers = rest
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	t := &fakeTimer{at: c.mono + d, f: f}
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	c.fire()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.onSleep != nil {
		c.onSleep(d)
	}
	c.Advance(d)
	return ctx.Err()
}

var epoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// casResult is a probe verdict of cas for s, for tests over stores already known to enforce
// conditions (the probe itself is tested in store/probe).
func casResult(s *store.Store) *probe.Result {
	return &probe.Result{Store: s.Describe(), Coordination: probe.CAS, Reason: "test: known to enforce conditions"}
}

// testConfig is a lease config for tests: TTL 10 s, skew 2 s, renewal every 3 s.
func testConfig(node string) Config {
	c := DefaultConfig()
	c.TTL, c.Skew, c.RenewEvery, c.Node = 10*time.Second, 2*time.Second, 3*time.Second, node
	return c
}

// machine is one node: a Leaser over the shared store with a clock of its own.
type machine struct {
	*Leaser
	clock *fakeClock
}

func newMachine(t *testing.T, s *store.Store, node string, mod func(*Config)) machine {
	t.Helper()
	c := testConfig(node)
	if mod != nil {
		mod(&c)
	}
	clk := newClock(epoch)
	l, err := Open(context.Background(), s, c, &Options{Probe: casResult(s), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return machine{l, clk}
}

func memStore() *store.Store { return store.New(mem.New(), nil) }

func mustAcquire(t *testing.T, m machine, name string) *Lease {
	t.Helper()
	h, err := m.Acquire(context.Background(), name)
	if err != nil {
		t.Fatalf("%s: acquire %s: %v", m.cfg.Node, name, err)
	}
	return h
}

func wantCode(t *testing.T, err error, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error %v, want %v", err, kind)
	}
}

// lossy applies a put and then reports its answer lost (a transport fault), for the puts
// whose key match says so, once each.
type lossy struct {
	driver.Bucket
	mu    sync.Mutex
	match func(key string) bool
	lost  int
}

func (b *lossy) Unwrap() driver.Bucket { return b.Bucket }

func (b *lossy) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	info, err := b.Bucket.Put(ctx, key, body, o)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil && b.match != nil && b.match(key) {
		b.match = nil
		b.lost++
		return driver.ObjectInfo{}, &driver.Error{Op: "put", Key: key, Kind: driver.ErrUnavailable, Fault: driver.FaultTransport,
			Err: errors.New("connection reset after the request was sent")}
	}
	return info, err
}

// recordIn reads the lease record as it is in s.
func recordIn(t *testing.T, s *store.Store, name string) (Record, string) {
	t.Helper()
	rec, etag, found, err := OpenLog(s, name).Lease(context.Background())
	if err != nil || !found {
		t.Fatalf("lease object of %s: found %v, %v", name, found, err)
	}
	return rec, etag
}

func memBucket() driver.Bucket { return mem.New() }

// ignoring is a store that ignores every condition.
type ignoring struct{ driver.Bucket }

func (s ignoring) Unwrap() driver.Bucket { return s.Bucket }

func (s ignoring) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	var c driver.PutOptions
	if o != nil {
		c = *o
	}
	c.IfMatch, c.IfNoneMatch = "", false
	return s.Bucket.Put(ctx, key, body, &c)
}
