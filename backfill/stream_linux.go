package backfill

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipeSize is the capacity asked for when the records go to a pipe.
const pipeSize = 1 << 20

// recordStream is what the standard output sink writes to, told apart by what w is: a
// pipe reports how many bytes its reader has not read yet (FIONREAD on the write end counts
// what is still in the pipe), so that only records the reader took out are counted
// delivered; a regular file is synced before each commit; anything else (a terminal, a
// socket, /dev/null) is written to as it is. A reader that closes the pipe becomes an error
// of the next write (EPIPE) rather than a SIGPIPE that would kill the worker before it hands
// its splits back.
func recordStream(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok {
		return w
	}
	signal.Ignore(syscall.SIGPIPE)
	fi, err := f.Stat()
	switch {
	case err != nil:
		return plainStream{f}
	case fi.Mode()&os.ModeNamedPipe != 0:
		widenPipe(f)
		return pipeStream{f}
	case fi.Mode().IsRegular():
		return fileStream{f}
	}
	return plainStream{f}
}

// widenPipe raises the capacity of the pipe f (Linux allows up to /proc/sys/fs/pipe-max-size,
// 1 MiB by default, without privileges), so that the records cross to the reader in fewer,
// larger steps, with far fewer context switches on both sides than through the default
// 64 KiB. A refusal changes nothing.
func widenPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize) })
}

// pipeStream is the write end of a pipe.
type pipeStream struct{ f *os.File }

func (p pipeStream) Write(b []byte) (int, error) { return p.f.Write(b) }

var _ Unreader = pipeStream{}

// Unread returns how many bytes are in the pipe, not yet read; with bytes left in it and no
// reader (the write end polls POLLERR), the reader is gone: EPIPE.
func (p pipeStream) Unread() (int, error) {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var ierr error
	err = rc.Control(func(fd uintptr) {
		// FIONREAD, which Linux names TIOCINQ: the bytes in the pipe, from either end.
		if n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ); ierr != nil || n == 0 {
			return
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if _, perr := unix.Poll(fds, 0); perr == nil && fds[0].Revents&unix.POLLERR != 0 {
			ierr = fmt.Errorf("%d bytes unread: %w", n, syscall.EPIPE)
		}
	})
	if err == nil {
		err = ierr
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}
