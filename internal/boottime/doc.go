// Package boottime reads the machine's boot clock: a clock that, unlike the monotonic
// reading of time.Now (CLOCK_MONOTONIC on Linux), goes on counting while the machine is
// suspended, and that, like it, never jumps with the wall clock. A deadline a process keeps
// for others — a lease holder's, which other machines count down on their own clocks while
// this one sleeps — must be judged on it: a laptop closed for an hour past its lease's
// deadline would otherwise wake up believing that it still holds the lease.
//
// It promises:
//   - Now is the boot clock (CLOCK_BOOTTIME on Linux; elsewhere the monotonic clock, which
//     is what those systems offer); only differences of its readings mean anything.
//   - AfterFunc calls f once d has passed on the boot clock, within Poll of it after a
//     suspend: Go's timers run on the monotonic clock and stand still while the machine
//     sleeps, so the timer it sets never waits more than Poll before it reads the boot clock
//     again.
package boottime
