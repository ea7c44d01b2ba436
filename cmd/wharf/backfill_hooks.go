//go:build wharftest

package main

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store/driver"
)

// The backfill's test hooks, set by environment variables:
const (
	// envTestBackfillPause slows every read of a backfill's source by a duration (the fleet
	// tests stretch a job so that a worker killed at a random time dies inside a split).
	envTestBackfillPause = "WHARF_TEST_BACKFILL_PAUSE"
	// envTestBackfillFail makes each read of a source object fail as unavailable (past the
	// retry policy, no retry) with this probability, from 0 to 1: an attempt of its split
	// fails and is handed back.
	envTestBackfillFail = "WHARF_TEST_BACKFILL_FAIL"
	// envTestBackfillDeny makes every read of a source object whose key holds the value fail
	// as forbidden (a fatal error), and holds the lease of any split after the first until one
	// such read failed: a split is leased just before the fatal error.
	envTestBackfillDeny = "WHARF_TEST_BACKFILL_DENY"
	// envTestBackfillCrash, set to after-part, SIGKILLs the worker once a store sink has
	// written a split's part, before the split is committed done.
	envTestBackfillCrash = "WHARF_TEST_BACKFILL_CRASH"
	// envTestBackfillBroken, set to plan, runs the deliberately broken backfill the fleet's
	// history check must fail (backfill.BreakForTest).
	envTestBackfillBroken = "WHARF_TEST_BACKFILL_BROKEN"
	// envTestBackfillHold names a file: every read of a source object waits until it exists
	// (or the job stops), so no split can finish before the test lets it.
	envTestBackfillHold = "WHARF_TEST_BACKFILL_HOLD"
	// envTestBackfillHoldOnly narrows envTestBackfillHold to the objects whose key holds the
	// value: every other split reads at once, and the job stays running (the status page's
	// test looks at a fleet with splits done, one quarantined and one held).
	envTestBackfillHoldOnly = "WHARF_TEST_BACKFILL_HOLD_ONLY"
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

// backfillTestWrap returns a decorator of the source's bucket (which holds the bucket
// coordinator's records too, unless coordinator_store names another) that sleeps before each
// Get, fails or denies some, and holds the lease of a split, as the variables say; nil
// without them. It also switches on the broken backfill envTestBackfillBroken names.
func backfillTestWrap(getenv func(string) string) func(driver.Bucket) driver.Bucket {
	if getenv(envTestBackfillBroken) != "" {
		backfill.BreakForTest(getenv(envTestBackfillBroken))
	}
	d, err := time.ParseDuration(getenv(envTestBackfillPause))
	if err != nil || d < 0 {
		d = 0
	}
	fail, err := strconv.ParseFloat(getenv(envTestBackfillFail), 64)
	if err != nil || fail < 0 {
		fail = 0
	}
	deny, hold := getenv(envTestBackfillDeny), getenv(envTestBackfillHold)
	if d == 0 && fail == 0 && deny == "" && hold == "" {
		return nil
	}
	return func(b driver.Bucket) driver.Bucket {
		return &slowSource{Bucket: b, d: d, fail: fail, deny: deny, hold: hold, holdOnly: getenv(envTestBackfillHoldOnly), leased: map[string]bool{}}
	}
}

// slowSource sleeps before each Get, holds, fails or denies some reads of source objects, and
// stalls the lease of a split; every other call reaches the bucket it wraps.
type slowSource struct {
	driver.Bucket
	d    time.Duration
	fail float64
	deny string
	hold string
	// holdOnly, when set, limits hold to the keys that contain it.
	holdOnly string

	mu     sync.Mutex
	leased map[string]bool
}

func (s *slowSource) Unwrap() driver.Bucket { return s.Bucket }

func (s *slowSource) Get(ctx context.Context, key string, o *driver.GetOptions) (*driver.Object, error) {
	time.Sleep(s.d)
	if backfill.IsState(key) {
		return s.Bucket.Get(ctx, key, o) // the coordinator's records: slowed, never failed
	}
	for s.hold != "" && strings.Contains(key, s.holdOnly) {
		if _, err := os.Stat(s.hold); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	if s.fail > 0 && rand.Float64() < s.fail {
		return nil, &driver.Error{Op: "get", Key: key, Kind: driver.ErrUnavailable, Err: errors.New("a failure the test hook injected")}
	}
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

// Put holds, with envTestBackfillDeny, the first write of each split's lease after the
// first split's until a read was denied, and then makes it land whatever the job's context
// says: the split is leased just before the fatal error, and its worker must hand it back.
func (s *slowSource) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	if s.deny != "" && s.first(key) {
		backfillLeasingOnce.Do(func() { close(backfillLeasing) })
		select {
		case <-backfillDenied:
			time.Sleep(200 * time.Millisecond) // the job has been cancelled by now
		case <-time.After(10 * time.Second):
		}
		ctx = context.WithoutCancel(ctx)
	}
	return s.Bucket.Put(ctx, key, body, o)
}

// first reports whether key is a split's lease written for the first time, after another
// split's.
func (s *slowSource) first(key string) bool {
	if !strings.Contains(key, lease.LeasePrefix+"split-") {
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

// backfillTestSink returns a decorator of a store sink that, with
// envTestBackfillCrash=after-part, SIGKILLs the worker as soon as a part is written; nil
// without it.
func backfillTestSink(getenv func(string) string) func(backfill.Sink) backfill.Sink {
	if getenv(envTestBackfillCrash) != "after-part" {
		return nil
	}
	return func(s backfill.Sink) backfill.Sink { return crashingSink{s} }
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
