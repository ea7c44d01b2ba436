package supervise

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// childAttr is how Run starts its command on Linux: in the process group group
// (the watcher's) when it is not 0, and with a parent-death signal (SIGKILL when the thread
// that started it exits; startSupervised keeps that thread for the command's life).
func childAttr(group int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: group != 0, Pgid: group, Pdeathsig: syscall.SIGKILL}
}

// isTTY reports whether f is a terminal.
func isTTY(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
