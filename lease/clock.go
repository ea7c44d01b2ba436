package lease

import (
	"context"
	"math"
	"time"

	"github.com/wharfdata/wharf/internal/boottime"
	"github.com/wharfdata/wharf/internal/sleep"
)

// Clock is what a lease reads time from. Mono is the only reading that judges expiry: a
// monotonic clock of this machine, of which only differences mean anything. Now is the wall
// clock, written into lease records and log entries for people to read and never compared
// with another machine's.
type Clock interface {
	Now() time.Time
	Mono() time.Duration
	// Sleep waits d or until ctx ends (returning ctx's error).
	Sleep(ctx context.Context, d time.Duration) error
	// AfterFunc calls f once d has passed on this clock, unless stop is called first (stop
	// reports whether it prevented the call). A holder's deadline runs on it.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// SystemClock returns the clock of this process. Mono reads the machine's boot clock
// (internal/boottime: CLOCK_BOOTTIME on Linux), which does not jump with the wall clock, runs
// on while the process is stopped, and — unlike the monotonic reading of time.Now — counts
// the time the machine is suspended: other machines count a lease down while this one
// sleeps. AfterFunc runs on that clock too, firing within boottime.Poll of a wake past its
// time (a holder's deadline).
func SystemClock() Clock { return newSystemClock(boottime.Clock{}) }

func newSystemClock(boot boottime.Clock) systemClock {
	return systemClock{boot: boot, start: boot.Now()}
}

type systemClock struct {
	boot  boottime.Clock
	start time.Duration
}

func (c systemClock) Now() time.Time      { return time.Now() }
func (c systemClock) Mono() time.Duration { return c.boot.Now() - c.start }

func (c systemClock) Sleep(ctx context.Context, d time.Duration) error { return sleep.For(ctx, d) }

func (c systemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return c.boot.AfterFunc(d, f)
}

// plus is a + b for durations that are not negative, saturating at the largest duration
// instead of wrapping round: every sum of a reading, a TTL, the skew bound and a wait goes
// through it.
func plus(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
