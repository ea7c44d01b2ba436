//go:build unix

package supervise

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/wharfdata/wharf/internal/boottime"
)

// supervised is the command of Run, started so that it does not outlive the supervisor (the
// process that called Run, "wharf" below):
//
//   - A watcher process (this binary again, running Watch) leads a process group
//     of its own, and the command joins that group (unless stdin is a terminal: an
//     interactive command stays in wharf's group, so that it can read the terminal), so that
//     stopping the group stops what the command started too.
//   - The watcher holds the read end of a pipe whose write end only wharf has: when wharf
//     ends, however it ends (SIGKILL included), the pipe closes and the watcher kills its
//     group, the command's. While the watcher lives its group exists, so the id it kills
//     never names anyone else's.
//   - wharf also tells the watcher, over that pipe, how long the command may run: until the
//     lease's deadline plus the grace wharf gives after it (limit), sent again as renewals
//     move the deadline. A wharf that is stopped (SIGSTOP, ^Z: its group is the terminal's,
//     not the command's) renews nothing and stops nothing, so the watcher kills the group
//     once that time has passed without a newer word from wharf.
//   - On Linux the command also gets a parent-death signal (SIGKILL), which the kernel sends
//     when the thread that started it exits: the goroutine that starts it is locked to its
//     thread until the command has ended.
type supervised struct {
	cmd   *exec.Cmd
	group int      // the process group the command is in, led by the watcher; 0 without one
	watch *os.File // the write end of the watcher's pipe; nil without a watcher
	done  chan error
	quit  chan struct{} // closed by finish: the limit is no longer sent
}

// limitEvery is how often wharf sends the watcher the command's time limit: often enough
// that a renewal's new deadline reaches it well before the old one passes.
func limitEvery(renewal time.Duration) time.Duration {
	return min(max(renewal/4, 10*time.Millisecond), 250*time.Millisecond)
}

// startSupervised starts cmd as described on supervised; self is this binary, which runs Watch
// with the arguments watcher. limit says how much longer the command may run (false: no
// limit, a machine lease), and is sent to the watcher before the command starts and every
// every after.
func startSupervised(cmd *exec.Cmd, self string, watcher []string, interactive bool, limit func() (time.Duration, bool), every time.Duration) (*supervised, error) {
	s := &supervised{cmd: cmd, done: make(chan error, 1), quit: make(chan struct{})}
	if !interactive {
		w, pid, err := startWatcher(self, watcher)
		if err != nil {
			return nil, fmt.Errorf("starting the watcher that stops the command should wharf die: %w", err)
		}
		s.watch, s.group = w, pid
		if s.sendLimit(limit) != nil {
			s.finish()
			return nil, fmt.Errorf("the watcher that stops the command should wharf die exited at once")
		}
		go s.sendLimits(limit, every)
	}
	cmd.SysProcAttr = childAttr(s.group)
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // the parent-death signal follows the thread that forks
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.done <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		s.finish()
		return nil, err
	}
	return s, nil
}

// startWatcher starts self with the arguments watcher (which run Watch), leading a process
// group of its own, with its stdin the read end of a pipe; it returns the write end and the
// watcher's pid (its group).
func startWatcher(self string, watcher []string) (*os.File, int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	wc := exec.Command(self, watcher...)
	wc.Stdin, wc.Env = r, []string{}
	wc.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := wc.Start(); err != nil {
		w.Close()
		return nil, 0, err
	}
	go func() { _ = wc.Wait() }() // reap it when it exits
	return w, wc.Process.Pid, nil
}

// sendLimit tells the watcher how much longer the command may run, as limit says.
func (s *supervised) sendLimit(limit func() (time.Duration, bool)) error {
	d, ok := limit()
	if !ok {
		return nil
	}
	_, err := s.watch.WriteString(strconv.FormatInt(int64(max(d, 0)), 10) + "\n")
	return err
}

// sendLimits sends the limit every every until finish.
func (s *supervised) sendLimits(limit func() (time.Duration, bool), every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			if s.sendLimit(limit) != nil {
				return // the watcher is gone (finish killed it, or someone else did)
			}
		}
	}
}

// signal sends sig to the command's group (the watcher ignores all but SIGKILL), or to the
// command alone without a group.
func (s *supervised) signal(sig syscall.Signal) {
	if s.group != 0 {
		_ = syscall.Kill(-s.group, sig)
		return
	}
	_ = s.cmd.Process.Signal(sig)
}

// finish, once the command has ended, kills what it left running in its group, the watcher
// with it.
func (s *supervised) finish() {
	if s.group != 0 {
		_ = syscall.Kill(-s.group, syscall.SIGKILL)
	}
	if s.watch != nil {
		close(s.quit)
		s.watch.Close()
	}
}

// Watch is the watcher process (`wharf lease watch-group`, the arguments Options.Watcher
// names): it kills its own process group, the command's, when in ends (the supervisor that
// started it is gone, or has killed it), or when the last time limit read from in has passed
// without a newer one (the supervisor was stopped past its lease's deadline). Each line of in
// is a limit: a count of nanoseconds, from when the line is read. It ignores the signals that
// stop the command gracefully, and those a terminal or a service manager sends. Run other
// than by Run (not leading a process group), it fails ErrUsage.
func Watch(in io.Reader) error {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	if syscall.Getpgrp() != syscall.Getpid() {
		return &usage{errors.New("lease watch-group: not a process group leader (it is started by `wharf lease run`)")}
	}
	limits := make(chan time.Duration)
	go func() {
		defer close(limits)
		for sc := bufio.NewScanner(in); sc.Scan(); {
			if n, err := strconv.ParseInt(sc.Text(), 10, 64); err == nil && n >= 0 {
				limits <- time.Duration(n)
			}
		}
	}()
	// The limit runs on the boot clock, as the lease's deadline does: a machine suspended
	// past it wakes with the command killed within boottime.Poll, not a whole limit later.
	expired := make(chan struct{}, 1)
	stop := func() bool { return false }
	for {
		select {
		case d, ok := <-limits:
			if !ok {
				return syscall.Kill(0, syscall.SIGKILL)
			}
			stop()
			stop = boottime.AfterFunc(d, func() { expired <- struct{}{} })
		case <-expired:
			return syscall.Kill(0, syscall.SIGKILL)
		}
	}
}
