//go:build wharftest

package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/store/driver"
)

// The backfill's test hooks, set by environment variables:
const (
	// envTestBackfillPause slows every read of a backfill's source by a duration (the fleet
	// tests stretch a job so that a worker killed at a random time dies inside a split).
	envTestBackfillPause = "WHARF_TEST_BACKFILL_PAUSE"
	// envTestBackfillDeny makes every read of a source object whose key holds the value fail
	// as forbidden (a fatal error), and holds the lease of any split after the first until one
	// such read failed: a split is leased just before the fatal error.
	envTestBackfillDeny = "WHARF_TEST_BACKFILL_DENY"
	// envTestBackfillCrash, set to after-part, SIGKILLs the worker once a store sink has
	// written a split's part, before the split is committed done.
	envTestBackfillCrash = "WHARF_TEST_BACKFILL_CRASH"
)

// With envTestBackfillDeny, the first denied read waits until a second split's lease is
// being written (backfillLeasing), and that write waits until the read was denied
// (backfillDenied): the order is the same on every run.
var (
	backfillDenied      = make(chan struct{})
	backfillDeniedOnce  sync.Once
	backfillLeasing     = make(chan struct{})
	backfillLeasingOnce sync.Once
)

// backfillTestWrap returns a decorator of the source's bucket that sleeps before each Get
// and denies the reads envTestBackfillDeny names, or nil without the variables.
func backfillTestWrap(getenv func(string) string) func(driver.Bucket) driver.Bucket {
	d, err := time.ParseDuration(getenv(envTestBackfillPause))
	if err != nil || d < 0 {
		d = 0
	}
	deny := getenv(envTestBackfillDeny)
	if d == 0 && deny == "" {
		return nil
	}
	return func(b driver.Bucket) driver.Bucket { return &slowSource{Bucket: b, d: d, deny: deny} }
}

// slowSource sleeps before each Get, and denies some; every other call reaches the bucket it
// wraps.
type slowSource struct {
	driver.Bucket
	d    time.Duration
	deny string
}

func (s *slowSource) Unwrap() driver.Bucket { return s.Bucket }

func (s *slowSource) Get(ctx context.Context, key string, o *driver.GetOptions) (*driver.Object, error) {
	time.Sleep(s.d)
	if s.deny != "" && strings.Contains(key, s.deny) {
		select {
		case <-backfillLeasing:
		case <-time.After(5 * time.Second):
		}
		backfillDeniedOnce.Do(func() { close(backfillDenied) })
		return nil, &driver.Error{Op: "get", Key: key, Kind: driver.ErrForbidden}
	}
	return s.Bucket.Get(ctx, key, o)
}

// backfillTestCoordinator holds, with envTestBackfillDeny, the first write that leases each
// split after the first until a read was denied, and then makes it land whatever the job's
// context says: the split is leased just before the fatal error, and its worker must hand
// it back.
func backfillTestCoordinator(getenv func(string) string, c backfill.Coordinator) backfill.Coordinator {
	if getenv(envTestBackfillDeny) == "" {
		return c
	}
	return &stallingLeases{Coordinator: c, leased: map[string]bool{}}
}

type stallingLeases struct {
	backfill.Coordinator
	mu     sync.Mutex
	leased map[string]bool
}

// held reports whether a write of value at key leases a split for the first time after
// another was leased.
func (s *stallingLeases) held(key string, value []byte) bool {
	var st backfill.SplitState
	if !strings.HasPrefix(key, "state/") || json.Unmarshal(value, &st) != nil || st.Status != backfill.StatusLeased {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leased[key] {
		return false
	}
	s.leased[key] = true
	return len(s.leased) > 1
}

func (s *stallingLeases) stall(ctx context.Context, key string, value []byte) context.Context {
	if !s.held(key, value) {
		return ctx
	}
	backfillLeasingOnce.Do(func() { close(backfillLeasing) })
	select {
	case <-backfillDenied:
		time.Sleep(200 * time.Millisecond) // the job has been cancelled by now
	case <-time.After(10 * time.Second):
	}
	return context.WithoutCancel(ctx)
}

func (s *stallingLeases) Create(ctx context.Context, key string, value []byte) (string, error) {
	return s.Coordinator.Create(s.stall(ctx, key, value), key, value)
}

func (s *stallingLeases) Update(ctx context.Context, key string, value []byte, rev string) (string, error) {
	return s.Coordinator.Update(s.stall(ctx, key, value), key, value, rev)
}

// backfillTestSink wraps a store sink so that, with envTestBackfillCrash=after-part, the
// worker is SIGKILLed as soon as a part is written.
func backfillTestSink(getenv func(string) string, s backfill.Sink) backfill.Sink {
	if getenv(envTestBackfillCrash) != "after-part" {
		return s
	}
	return crashingSink{s}
}

type crashingSink struct{ backfill.Sink }

func (c crashingSink) Open(ctx context.Context, sp *backfill.Split, from backfill.Watermark, ack backfill.Ack) (backfill.SplitWriter, backfill.Watermark, error) {
	w, wm, err := c.Sink.Open(ctx, sp, from, ack)
	if err != nil {
		return nil, wm, err
	}
	return crashingWriter{w}, wm, nil
}

type crashingWriter struct{ backfill.SplitWriter }

func (w crashingWriter) Close(ctx context.Context) (*backfill.PartInfo, error) {
	p, err := w.SplitWriter.Close(ctx)
	if err == nil && p != nil {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	return p, err
}
