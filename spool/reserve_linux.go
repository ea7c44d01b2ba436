package spool

import (
	"os"

	"golang.org/x/sys/unix"
)

// reserveSpace makes sure that n bytes of f past end are allocated without changing its size
// (FALLOC_FL_KEEP_SIZE), so that appends up to there need no new space on the file system.
// While at least half of that is allocated already (one fstat tells), it does nothing more.
func reserveSpace(f *os.File, end, n int64) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = conn.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) == nil && st.Blocks*512 >= end+n/2 {
			return
		}
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
