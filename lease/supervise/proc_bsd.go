//go:build unix && !linux

package supervise

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// childAttr is how Run starts its command where there is no parent-death
// signal: in the process group group (the watcher's, which covers wharf's death) when it is
// not 0.
func childAttr(group int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: group != 0, Pgid: group}
}

// isTTY reports whether f is a terminal.
func isTTY(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TIOCGETA)
	return err == nil
}
