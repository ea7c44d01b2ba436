//go:build !linux

package spool

// readKernelClock does not ask the kernel outside Linux: macOS and the BSDs have ntp_adjtime
// but wharf does not read it yet, and Windows has no such state. The file's clock is unknown
// unless the caller gives it.
func readKernelClock() ClockReading {
	return ClockReading{Clock: ClockUnknown, Why: "this system's clock state is not read: give it (--clock-synced)"}
}
