package supervise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/wharfdata/wharf/lease"
)

// The variables the command finds in its environment.
const (
	EnvFence = "WHARF_LEASE_FENCE" // the fence the command runs under
	EnvName  = "WHARF_LEASE_NAME"  // the lease's name
)

// ErrUsage marks a failure that is the caller's to fix: a command that cannot be started, or
// Watch run other than by Run. It adds nothing to the error's message.
var ErrUsage = errors.New("supervise: usage")

// usage marks err with ErrUsage.
type usage struct{ err error }

func (e *usage) Error() string   { return e.err.Error() }
func (e *usage) Unwrap() []error { return []error{ErrUsage, e.err} }

// ExitError is the non-zero exit status of the command Run ran.
type ExitError struct {
	Argv   []string
	Status int // 128 + the signal for a command killed by one, as shells report it
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("lease run: %s exited with status %d", e.Argv[0], e.Status)
}

// ExitStatus is the status a process that ran the command on its behalf exits with.
func (e *ExitError) ExitStatus() int { return e.Status }

// Options are what Run is given besides the lease and the command.
type Options struct {
	// Grace is how long the command may take to exit after SIGTERM before SIGKILL; a lease
	// lost at its deadline gives it at most the lease's skew bound.
	Grace time.Duration
	// Stdin, Stdout and Stderr are the command's streams. A Stdin that is a terminal keeps the
	// command in this process's group (see the package doc).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Env is the command's environment, to which EnvFence and EnvName are added; nil is this
	// process's.
	Env []string
	// Watcher are the arguments that make this binary run Watch (a hidden entry of its
	// command line), with its stdin the watcher's pipe.
	Watcher []string
	// Logger receives the run's start and stop (nil discards).
	Logger *slog.Logger
}

// Run holds the lease name of l while argv runs: it acquires, renews in the background, stops
// the command if the lease is lost (or ctx ends), and releases at the end. It returns nil
// when the command exited 0, an *ExitError with its status otherwise, and the acquisition's
// error without running it.
func Run(ctx context.Context, l *lease.Leaser, name string, argv []string, o Options) error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h, err := l.Acquire(ctx, name)
	if err != nil {
		return err
	}
	stopKeep := h.Renewing(ctx)
	runErr := runHeld(ctx, h, l.Config(), argv, o)
	stopKeep()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := h.Release(rctx); err != nil && runErr == nil {
		return err
	}
	return runErr
}

// runHeld runs argv with the fence in its environment, so that it does not outlive this
// process (see supervised), and waits for it, stopping it when the lease is lost or ctx ends:
// SIGTERM to its process group, then SIGKILL after grace. A lease lost at its deadline leaves
// at least 2 × skew before another node can take it over, so the command then gets at most
// skew of grace. What the command leaves running in its group when it ends is killed before
// the lease is released. Should this process be stopped, the watcher kills the command's group
// when that grace after the deadline has passed.
func runHeld(ctx context.Context, h *lease.Lease, cfg lease.Config, argv []string, o Options) error {
	skew, grace := cfg.Skew, o.Grace
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(slices.Clip(env), EnvFence+"="+strconv.FormatInt(h.Fence(), 10), EnvName+"="+h.Name())
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("lease run: finding this binary to watch the command with: %w", err)
	}
	in, _ := o.Stdin.(*os.File)
	// Should this process be stopped, the watcher stops the command by the time it would have.
	limit := func() (time.Duration, bool) {
		d := h.Deadline()
		return time.Until(d) + min(grace, skew), !d.IsZero()
	}
	c, err := startSupervised(cmd, self, o.Watcher, in != nil && isTTY(in), limit, limitEvery(cfg.Renewal()))
	if err != nil {
		return &usage{fmt.Errorf("lease run: %w", err)}
	}
	defer c.finish()
	o.Logger.Info("lease run: started", "lease", h.Name(), "fence", h.Fence(), "pid", cmd.Process.Pid, "process_group", c.group != 0)
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
	o.Logger.Warn("lease run: stopping the command", "pid", cmd.Process.Pid, "grace", grace)
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
	var ee *ExitError
	switch err := exitStatus(argv, err); {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Status
	}
	return -1
}

// exitStatus turns the command's end into the caller's: nil for status 0, an *ExitError
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
	return &ExitError{Argv: argv, Status: status}
}
