package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/wharfdata/wharf/lease"
)

// The variables `wharf lease run` gives its command.
const (
	envLeaseFence = "WHARF_LEASE_FENCE" // the fence the command runs under
	envLeaseName  = "WHARF_LEASE_NAME"  // the lease's name
)

// commandStatus is the exit status of the command `wharf lease run` ran: wharf exits with
// it (see exitCode).
type commandStatus struct {
	argv   []string
	status int
}

func (e *commandStatus) Error() string {
	return fmt.Sprintf("lease run: %s exited with status %d", e.argv[0], e.status)
}

// ExitStatus is the status wharf exits with.
func (e *commandStatus) ExitStatus() int { return e.status }

// leaseRun holds the lease while argv runs: acquire, renew in the background, stop the
// command if the lease is lost (or wharf is told to stop), release at the end.
func (a *app) leaseRun(ctx context.Context, fl *pflag.FlagSet, f leaseFlags, name string, argv []string) error {
	l, err := a.leaser(ctx, fl, f)
	if err != nil {
		return err
	}
	defer l.Store().Close()
	h, err := l.Acquire(ctx, name)
	if err != nil {
		return err
	}
	stopKeep := h.Renewing(ctx)
	runErr := a.runHeld(ctx, h, f.grace, l.Config(), argv)
	stopKeep()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := h.Release(rctx); err != nil && runErr == nil {
		return err
	}
	return runErr
}

// runHeld runs argv with the fence in its environment, so that it does not outlive wharf
// (see supervised), and waits for it, stopping it when the lease is lost or ctx ends: SIGTERM
// to its process group, then SIGKILL after grace. A lease lost at its deadline leaves at
// least 2 × skew before another node can take it over, so the command then gets at most skew
// of grace. What the command leaves running in its group when it ends is killed before the
// lease is released. Should wharf itself be stopped, the watcher kills the command's group
// when that grace after the deadline has passed.
func (a *app) runHeld(ctx context.Context, h *lease.Lease, grace time.Duration, cfg lease.Config, argv []string) error {
	skew := cfg.Skew
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.in, a.out, a.err
	cmd.Env = append(os.Environ(), envLeaseFence+"="+strconv.FormatInt(h.Fence(), 10), envLeaseName+"="+h.Name())
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("lease run: finding this binary to watch the command with: %w", err)
	}
	in, _ := a.in.(*os.File)
	// Should wharf be stopped, the watcher stops the command by the time wharf would have.
	limit := func() (time.Duration, bool) {
		d := h.Deadline()
		return time.Until(d) + min(grace, skew), !d.IsZero()
	}
	c, err := startSupervised(cmd, self, in != nil && isTTY(in), limit, limitEvery(cfg.Renewal()))
	if err != nil {
		return usageErr(fmt.Errorf("lease run: %w", err))
	}
	defer c.finish()
	a.log.Info("lease run: started", "lease", h.Name(), "fence", h.Fence(), "pid", cmd.Process.Pid, "process_group", c.group != 0)
	var stopped error
	select {
	case err := <-c.done:
		if lost := h.Valid(); lost != nil { // the watcher killed it at the deadline, or it ended unleased
			return fmt.Errorf("lease run: the lease was lost while %s ran (it ended with status %d): %w", argv[0], statusOf(argv, err), lost)
		}
		return exitStatus(argv, err)
	case <-h.Lost():
		stopped = fmt.Errorf("lease run: the lease was lost while %s ran: stopped it: %w", argv[0], h.Err())
		if errors.Is(h.Err(), lease.ErrDeadlinePassed) {
			grace = min(grace, skew)
		}
	case <-ctx.Done():
	}
	a.log.Warn("lease run: stopping the command", "pid", cmd.Process.Pid, "grace", grace)
	c.signal(syscall.SIGTERM)
	select {
	case err = <-c.done:
	case <-time.After(grace):
		c.signal(syscall.SIGKILL)
		err = <-c.done
	}
	if stopped != nil {
		return stopped
	}
	return exitStatus(argv, err)
}

// statusOf is the status exitStatus gives the command's end (0 for success, -1 for a
// failure to wait for it).
func statusOf(argv []string, err error) int {
	var cs *commandStatus
	switch err := exitStatus(argv, err); {
	case err == nil:
		return 0
	case errors.As(err, &cs):
		return cs.status
	}
	return -1
}

// exitStatus turns the command's end into wharf's: nil for status 0, a *commandStatus
// otherwise (128 + the signal for a command killed by one, as shells report it).
func exitStatus(argv []string, err error) error {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return err
	}
	status := ee.ExitCode()
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		status = 128 + int(ws.Signal())
	}
	return &commandStatus{argv: argv, status: status}
}
