package lease

import (
	"context"
	"math"
	"time"
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

// SystemClock returns the clock of this process: time.Now, whose monotonic reading Mono
// uses (it does not jump with the wall clock, and it runs on while the process is stopped).
func SystemClock() Clock { return systemClock{start: time.Now()} }

type systemClock struct{ start time.Time }

func (c systemClock) Now() time.Time      { return time.Now() }
func (c systemClock) Mono() time.Duration { return time.Since(c.start) }

func (c systemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c systemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
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
