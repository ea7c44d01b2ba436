package boottime

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// On Linux Now is CLOCK_BOOTTIME, which counts suspends, and not CLOCK_MONOTONIC.
func TestNowIsTheBootClock(t *testing.T) {
	var boot, mono unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot); err != nil {
		t.Skipf("no CLOCK_BOOTTIME here: %v", err)
	}
	got := Now()
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono); err != nil {
		t.Fatal(err)
	}
	if d := got - time.Duration(boot.Nano()); d < 0 || d > 50*time.Millisecond {
		t.Errorf("Now is %s, CLOCK_BOOTTIME %s before it", got, time.Duration(boot.Nano()))
	}
	t.Logf("CLOCK_BOOTTIME − CLOCK_MONOTONIC here: %s (the time this machine was suspended)", time.Duration(boot.Nano()-mono.Nano()))
}
