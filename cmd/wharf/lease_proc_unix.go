//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
)

// supervised is the command of `wharf lease run`, started so that it does not outlive wharf:
//
//   - A watcher process (this binary again, `wharf lease watch-group`) leads a process group
//     of its own, and the command joins that group (unless stdin is a terminal: an
//     interactive command stays in wharf's group, so that it can read the terminal), so that
//     stopping the group stops what the command started too.
//   - The watcher holds the read end of a pipe whose write end only wharf has: when wharf
//     ends, however it ends (SIGKILL included), the pipe closes and the watcher kills its
//     group, the command's. While the watcher lives its group exists, so the id it kills
//     never names anyone else's.
//   - On Linux the command also gets a parent-death signal (SIGKILL), which the kernel sends
//     when the thread that started it exits: the goroutine that starts it is locked to its
//     thread until the command has ended.
type supervised struct {
	cmd   *exec.Cmd
	group int      // the process group the command is in, led by the watcher; 0 without one
	watch *os.File // the write end of the watcher's pipe; nil without a watcher
	done  chan error
}

// startSupervised starts cmd as described on supervised; self is this binary.
func startSupervised(cmd *exec.Cmd, self string, interactive bool) (*supervised, error) {
	s := &supervised{cmd: cmd, done: make(chan error, 1)}
	if !interactive {
		w, pid, err := startWatcher(self)
		if err != nil {
			return nil, fmt.Errorf("starting the watcher that stops the command should wharf die: %w", err)
		}
		s.watch, s.group = w, pid
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

// startWatcher starts `self lease watch-group`, leading a process group of its own, with its
// stdin the read end of a pipe; it returns the write end and the watcher's pid (its group).
func startWatcher(self string) (*os.File, int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	wc := exec.Command(self, "lease", "watch-group")
	wc.Stdin, wc.Env = r, []string{}
	wc.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := wc.Start(); err != nil {
		w.Close()
		return nil, 0, err
	}
	go func() { _ = wc.Wait() }() // reap it when it exits
	return w, wc.Process.Pid, nil
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
		s.watch.Close()
	}
}

// watchGroup is `wharf lease watch-group`: it waits until in ends (the wharf that started it
// is gone, or has killed it), then kills its own process group, the command's. It ignores
// the signals that stop the command gracefully, and those a terminal or a service manager
// sends.
func watchGroup(in io.Reader) error {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	if syscall.Getpgrp() != syscall.Getpid() {
		return usageErr(errors.New("lease watch-group: not a process group leader (it is started by `wharf lease run`)"))
	}
	_, _ = io.Copy(io.Discard, in)
	return syscall.Kill(0, syscall.SIGKILL)
}
