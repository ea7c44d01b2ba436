package boottime

import (
	"sync/atomic"
	"testing"
	"time"
)

// jumping is a boot clock that a test moves forward by hand, as a suspend moves the
// machine's: the Go timers under AfterFunc do not see the jump.
type jumping struct{ off atomic.Int64 }

func (j *jumping) clock() Clock {
	return Clock{Source: func() time.Duration { return Now() + time.Duration(j.off.Load()) }}
}

func (j *jumping) suspend(d time.Duration) { j.off.Add(int64(d)) }

// A deadline passed while the machine slept is kept within Poll of the wake: a plain Go
// timer would wait out the whole monotonic remainder (here an hour).
func TestAfterFuncFiresSoonAfterASuspendPastItsTime(t *testing.T) {
	var j jumping
	fired := make(chan time.Time, 1)
	stop := j.clock().AfterFunc(time.Hour, func() { fired <- time.Now() })
	defer stop()
	time.Sleep(3 * Poll / 2)
	select {
	case <-fired:
		t.Fatal("fired before its time, without a suspend")
	default:
	}
	woke := time.Now()
	j.suspend(time.Hour)
	select {
	case at := <-fired:
		if late := at.Sub(woke); late > 5*Poll {
			t.Errorf("fired %s after the wake, want within about %s", late, Poll)
		}
	case <-time.After(30 * Poll):
		t.Fatalf("not fired %s after a suspend past its time", 30*Poll)
	}
}

// The check is not vacuous: the monotonic timer alone misses the suspend.
func TestAPlainTimerMissesTheSuspend(t *testing.T) {
	var j jumping
	c := j.clock()
	at := c.Now() + time.Hour
	fired := make(chan struct{}, 1)
	tm := time.AfterFunc(time.Hour, func() { fired <- struct{}{} })
	defer tm.Stop()
	j.suspend(time.Hour)
	select {
	case <-fired:
		t.Fatal("a plain timer fired: the jump is not a suspend to it")
	case <-time.After(10 * Poll):
	}
	if c.Now() < at {
		t.Fatal("the jumping clock did not jump")
	}
}

func TestAfterFuncWithoutASuspend(t *testing.T) {
	start := time.Now()
	fired := make(chan time.Duration, 1)
	AfterFunc(3*Poll+30*time.Millisecond, func() { fired <- time.Since(start) })
	select {
	case took := <-fired:
		if took < 3*Poll+30*time.Millisecond {
			t.Errorf("fired after %s, before its time", took)
		}
	case <-time.After(time.Minute):
		t.Fatal("never fired")
	}
}

func TestStop(t *testing.T) {
	var n atomic.Int32
	stop := AfterFunc(Poll/2, func() { n.Add(1) })
	if !stop() {
		t.Error("stop before the time: false, want true (it prevented the call)")
	}
	if stop() {
		t.Error("stop twice: true, want false")
	}
	fired := make(chan struct{})
	stop = AfterFunc(0, func() { close(fired) })
	<-fired
	if stop() {
		t.Error("stop after the call: true, want false")
	}
	time.Sleep(Poll)
	if n.Load() != 0 {
		t.Error("a stopped timer called its function")
	}
}

func TestHugeDurationDoesNotWrap(t *testing.T) {
	fired := make(chan struct{}, 1)
	stop := AfterFunc(time.Duration(1<<63-1), func() { fired <- struct{}{} })
	defer stop()
	select {
	case <-fired:
		t.Fatal("a timer of the largest duration fired at once")
	case <-time.After(2 * Poll):
	}
}

// The boot clock runs with the monotonic clock while the machine is awake.
func TestNowRunsWithTheMonotonicClock(t *testing.T) {
	b0, m0 := Now(), time.Now()
	time.Sleep(50 * time.Millisecond)
	db, dm := Now()-b0, time.Since(m0)
	if diff := (db - dm).Abs(); diff > 20*time.Millisecond {
		t.Errorf("over %s of the monotonic clock the boot clock moved %s", dm, db)
	}
}
