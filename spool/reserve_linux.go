package spool

import (
	"os"

	"golang.org/x/sys/unix"
)

// reserveSpace allocates n bytes of f past end without changing its size
// (FALLOC_FL_KEEP_SIZE), so that appends up to there need no new space on the file system.
// Blocks already allocated stay as they are.
func reserveSpace(f *os.File, end, n int64) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = conn.Control(func(fd uintptr) {
		for {
			ferr = unix.Fallocate(int(fd), unix.FALLOC_FL_KEEP_SIZE, end, n)
			if ferr != unix.EINTR {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return ferr
}
