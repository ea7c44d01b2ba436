package lease

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/boottime"
	"github.com/wharfdata/wharf/store"
)

// A machine suspended past its holder's deadline (a laptop closed, a VM paused by its host)
// wakes with the lease lost, within boottime.Poll: other machines counted the TTL down
// while it slept. On the monotonic clock of time.Now, which stands still in a suspend, the
// holder would wake believing it had the whole hour left and run its command beside the
// node that took the lease over.
func TestAHolderSuspendedPastItsDeadlineWakesWithTheLeaseLost(t *testing.T) {
	var slept atomic.Int64
	clk := newSystemClock(boottime.Clock{Source: func() time.Duration { return boottime.Now() + time.Duration(slept.Load()) }})
	s := store.New(memBucket(), nil)
	c := testConfig("a")
	c.TTL, c.Skew, c.RenewEvery = time.Hour, time.Minute, 20*time.Minute
	l, err := Open(context.Background(), s, c, &Options{Probe: casResult(s), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	h, err := l.Acquire(context.Background(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * boottime.Poll)
	if err := h.Valid(); err != nil {
		t.Fatalf("before the suspend: %v", err)
	}
	woke := time.Now()
	slept.Store(int64(time.Hour)) // the machine slept an hour
	select {
	case <-h.Lost():
		if late := time.Since(woke); late > 10*boottime.Poll {
			t.Errorf("the lease was lost %s after the wake, want within about %s", late, boottime.Poll)
		}
	case <-time.After(50 * boottime.Poll):
		t.Fatalf("%s after waking an hour past its deadline the holder still holds the lease", 50*boottime.Poll)
	}
	if err := h.Valid(); !errors.Is(err, ErrNotHeld) || !errors.Is(err, ErrDeadlinePassed) {
		t.Errorf("after the wake Valid is %v, want its deadline passed", err)
	}
}

// Renewing keeps a lease past its TTL until stop, detached from the caller's cancellation,
// and renews nothing after stop has returned.
func TestRenewingKeepsTheLeaseUntilStopped(t *testing.T) {
	s := store.New(memBucket(), nil)
	c := testConfig("a")
	c.TTL, c.Skew, c.RenewEvery = 600*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
	l, err := Open(context.Background(), s, c, &Options{Probe: casResult(s)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h, err := l.Acquire(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	stop := h.Renewing(ctx)
	cancel() // the run is cancelled: the lease is still held until its holder releases it
	time.Sleep(2 * c.TTL)
	if err := h.Valid(); err != nil {
		t.Fatalf("after two TTLs of renewing: %v", err)
	}
	stop()
	_, before, _, err := OpenLog(s, "orders").Lease(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * c.RenewEvery / 2) // a renewal would have come; the deadline has not
	if _, after, _, err := OpenLog(s, "orders").Lease(context.Background()); err != nil || after != before {
		t.Errorf("the record changed after stop (revision %s, then %s; %v): a renewal outlived it", before, after, err)
	}
	if err := h.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
}
