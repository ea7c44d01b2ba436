// Package supervise runs a command under a held lease (`wharf lease run`): it acquires the
// lease, renews it while the command runs, stops the command when the lease is lost, releases
// the lease at the end, and returns the command's exit status.
//
// # What a run promises
//
//   - The command runs with WHARF_LEASE_FENCE (the fence it runs under) and WHARF_LEASE_NAME in
//     its environment, and only while the lease is held: Run acquires before it starts the
//     command and releases only after the command and what it left running in its process
//     group are gone.
//   - A lease lost while the command runs (fenced, released by name, or past its deadline)
//     stops it: SIGTERM to its process group, then SIGKILL after Options.Grace, or after at most
//     the lease's skew bound when the lease was lost at its deadline — a contender cannot take
//     the lease over before 2 × skew after that deadline, so the command is gone first.
//   - The command never outlives the process that called Run, however that process ends
//     (SIGKILL included), on every Unix: it runs in the process group of a watcher process
//     (this binary again, running Watch from the hidden entry Options.Watcher names) that
//     holds the read end of a pipe whose write end only the supervisor has. When the
//     supervisor ends the pipe closes and the watcher kills the group; while the watcher lives
//     its group exists, so the group it kills is never anyone else's.
//   - A supervisor that is stopped (SIGSTOP, ^Z) renews nothing and would stop nothing, so it
//     tells the watcher over that pipe how long the command may run (the lease's deadline
//     plus the grace given after one), again as renewals move the deadline; the watcher kills
//     the group once that time has passed, on the boot clock (a suspended machine counts).
//     The command is therefore gone before another holder can take the lease over.
//   - On Linux the command also gets a parent-death signal (SIGKILL when the supervisor's
//     thread that started it exits; that thread is kept for the command's life).
//   - A command whose stdin is a terminal stays in the supervisor's process group, so that it
//     can read the terminal: there only the parent-death signal (Linux) covers it. A process
//     that leaves the group on purpose (setsid, a daemon) is out of reach.
//   - Where there are no process groups (Windows) the command is started as any other:
//     stopped when the supervisor can, and left running by a supervisor that is killed.
//
// # Errors
//
// A command that exits non-zero is an *ExitError carrying its status (128 + the signal for
// one killed by a signal, as shells report it). A command (or watcher) that cannot be started
// is ErrUsage, as is Watch run other than by Run. A lease lost while the command ran wraps
// the lease's error (lease.ErrNotHeld, lease.ErrFenced). The messages name the command this
// package implements: "lease run: …".
package supervise
