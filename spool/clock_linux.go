package spool

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// adjtimex reads the kernel's clock discipline; the tests replace it.
var adjtimex = unix.Adjtimex

func readKernelClock() ClockReading {
	var tx unix.Timex // Modes 0: read only
	state, err := adjtimex(&tx)
	return clockFromTimex(state, int32(tx.Status), int64(tx.Maxerror), err)
}

// clockFromTimex judges adjtimex's answer: its return value (the clock state), the status
// bits and the maximum error in microseconds.
func clockFromTimex(state int, status int32, maxerrorUS int64, err error) ClockReading {
	maxErr := time.Duration(maxerrorUS) * time.Microsecond
	switch {
	case err != nil:
		return ClockReading{Clock: ClockUnknown, Why: fmt.Sprintf("kernel: adjtimex failed: %v", err)}
	case status&unix.STA_UNSYNC != 0:
		return ClockReading{Clock: ClockUnsynced, Why: fmt.Sprintf("kernel: not synchronized (STA_UNSYNC set, maximum error %s)", maxErr)}
	case state == unix.TIME_ERROR:
		return ClockReading{Clock: ClockUnsynced, Why: fmt.Sprintf("kernel: not synchronized (clock state TIME_ERROR, maximum error %s)", maxErr)}
	case maxErr > MaxClockError:
		return ClockReading{Clock: ClockUnsynced, Why: fmt.Sprintf("kernel: maximum error %s, over %s", maxErr, MaxClockError)}
	}
	return ClockReading{Clock: ClockSynced, Why: fmt.Sprintf("kernel: synchronized, maximum error %s", maxErr)}
}
