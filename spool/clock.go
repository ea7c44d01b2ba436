package spool

import (
	"fmt"
	"time"
)

// Clock says whether the clock that gave a file's event time was synchronized (to NTP, PTP…)
// when the file was added. ship keys a file whose clock was not under unsynced/ instead of its
// date=/hour= partition: its time, and so its partition, cannot be trusted.
type Clock string

// The clock states a finalized record holds.
const (
	// ClockUnknown: nothing is known. Records written before wharf recorded the clock hold
	// it, and so does an add on a system whose kernel does not say (see ReadClock). ship keys
	// such a file by its date=/hour=, as it always did: an upgrade never moves the key of a
	// file already spooled.
	ClockUnknown  Clock = ""
	ClockSynced   Clock = "synced"   // the clock was synchronized: the event time is trusted
	ClockUnsynced Clock = "unsynced" // it was not: the event time, and its partition, may be wrong
)

// MaxClockError is the largest error bound of a synchronized clock: a kernel that reports its
// clock synchronized but with a maximum error above this is taken as unsynchronized.
const MaxClockError = time.Second

// ClockReading is what the kernel said about its clock when a file was added.
type ClockReading struct {
	Clock Clock
	// Why says what the reading was made from, for messages: "kernel: synchronized, maximum
	// error 1.2ms", "kernel: STA_UNSYNC set", "given (--clock-synced=false)".
	Why string
}

// ReadClock asks the kernel whether the system clock is synchronized now. On Linux that is
// adjtimex(2) (read only): the clock is synchronized when the kernel's state is not
// TIME_ERROR, its status lacks STA_UNSYNC (which an NTP or PTP daemon clears while it
// disciplines the clock, and the kernel sets again once the maximum error passes 16 s), and
// the maximum error it reports is at most MaxClockError. Elsewhere the kernel is not asked and
// the reading is ClockUnknown: give the state (AddOptions.Clock) there.
func ReadClock() ClockReading { return readKernelClock() }

// parseClock checks a clock state given by a caller: synced, unsynced, or "" for the kernel's.
func parseClock(op string, c Clock) error {
	switch c {
	case ClockUnknown, ClockSynced, ClockUnsynced:
		return nil
	}
	return newErr(op, "", ErrInput, fmt.Errorf("clock %q: want synced or unsynced (or nothing, to ask the kernel)", string(c)))
}

// clockFor returns the clock state to record for an add: the caller's, or the kernel's now.
func clockFor(c Clock) Clock {
	if c != ClockUnknown {
		return c
	}
	return ReadClock().Clock
}
