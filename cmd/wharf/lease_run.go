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
	keepCtx, stopKeep := context.WithCancel(context.WithoutCancel(ctx))
	kept := make(chan struct{})
	go func() { h.Keep(keepCtx); close(kept) }()
	runErr := a.runHeld(ctx, h, f.grace, argv)
	stopKeep()
	<-kept
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := h.Release(rctx); err != nil && runErr == nil {
		return err
	}
	return runErr
}

// runHeld runs argv with the fence in its environment and waits for it, stopping it when
// the lease is lost or ctx ends.
func (a *app) runHeld(ctx context.Context, h *lease.Lease, grace time.Duration, argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.in, a.out, a.err
	cmd.Env = append(os.Environ(), envLeaseFence+"="+strconv.FormatInt(h.Fence(), 10), envLeaseName+"="+h.Name())
	if err := cmd.Start(); err != nil {
		return usageErr(fmt.Errorf("lease run: %w", err))
	}
	a.log.Info("lease run: started", "lease", h.Name(), "fence", h.Fence(), "pid", cmd.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var stopped error
	select {
	case err := <-done:
		return exitStatus(argv, err)
	case <-h.Lost():
		stopped = fmt.Errorf("lease run: the lease was lost while %s ran: stopped it: %w", argv[0], h.Err())
	case <-ctx.Done():
	}
	a.log.Warn("lease run: stopping the command", "pid", cmd.Process.Pid, "grace", grace)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		err = <-done
	}
	if stopped != nil {
		return stopped
	}
	return exitStatus(argv, err)
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
