package boottime

import (
	"time"

	"golang.org/x/sys/unix"
)

// now reads CLOCK_BOOTTIME: CLOCK_MONOTONIC plus the time the machine was suspended.
func now() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return monotonic() // a kernel older than 2.6.39: no boot clock to read
	}
	return time.Duration(ts.Nano())
}
