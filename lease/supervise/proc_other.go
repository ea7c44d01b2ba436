//go:build !unix

package supervise

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func limitEvery(time.Duration) time.Duration { return time.Second }

// supervised is the command of Run where there are no process groups: a command started as
// any other, which the supervisor stops when it can, and which outlives a supervisor that is
// killed (docs/lease.md says so).
type supervised struct {
	cmd   *exec.Cmd
	group int
	done  chan error
}

func startSupervised(cmd *exec.Cmd, _ string, _ []string, _ bool, _ func() (time.Duration, bool), _ time.Duration) (*supervised, error) {
	s := &supervised{cmd: cmd, done: make(chan error, 1)}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.done <- cmd.Wait() }()
	return s, nil
}

func (s *supervised) signal(sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		_ = s.cmd.Process.Kill()
		return
	}
	_ = s.cmd.Process.Signal(sig)
}

func (s *supervised) finish() {}

// Watch has nothing to watch where there are no process groups.
func Watch(io.Reader) error {
	return errors.New("lease watch-group: no process groups on this system")
}

func isTTY(*os.File) bool { return false }
