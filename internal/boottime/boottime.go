package boottime

import (
	"math"
	"sync"
	"time"
)

// Poll bounds how long AfterFunc waits on a Go timer before it reads the boot clock again:
// how late after a suspend it calls its function at most.
const Poll = 100 * time.Millisecond

// Clock is a boot clock: its readings come from Source (nil: the machine's, Now). A test
// gives a Source that jumps, as the boot clock does across a suspend.
type Clock struct {
	Source func() time.Duration
}

// Now reads the machine's boot clock.
func Now() time.Duration { return now() }

// Now reads c.
func (c Clock) Now() time.Duration {
	if c.Source != nil {
		return c.Source()
	}
	return now()
}

// AfterFunc calls f in its own goroutine once d has passed on c, unless stop is called
// first; stop reports whether it prevented the call.
func (c Clock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	t := &timer{c: c, at: plus(c.Now(), d), f: f}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.t = time.AfterFunc(min(max(d, 0), Poll), t.check)
	return t.stop
}

// AfterFunc is Clock{}.AfterFunc: f once d has passed on the machine's boot clock.
func AfterFunc(d time.Duration, f func()) (stop func() bool) { return Clock{}.AfterFunc(d, f) }

type timer struct {
	c  Clock
	at time.Duration
	f  func()

	mu   sync.Mutex
	t    *time.Timer
	done bool // fired or stopped
}

func (t *timer) check() {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return
	}
	if left := t.at - t.c.Now(); left > 0 {
		t.t.Reset(min(left, Poll))
		t.mu.Unlock()
		return
	}
	t.done = true
	t.mu.Unlock()
	t.f()
}

func (t *timer) stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return false
	}
	t.done = true
	t.t.Stop()
	return true
}

// plus is a + b saturating at the largest duration (b is not negative).
func plus(a, b time.Duration) time.Duration {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + max(b, 0)
}
