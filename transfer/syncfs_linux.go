package transfer

import (
	"os"

	"golang.org/x/sys/unix"
)

// haveSyncFS says whether syncFS flushes the whole file system.
const haveSyncFS = true

// syncFS flushes the whole file system holding f (syncfs(2)).
func syncFS(f *os.File) error { return unix.Syncfs(int(f.Fd())) }

// startWriteback asks the kernel to start writing n bytes of f from off to disk
// (sync_file_range(2) with SYNC_FILE_RANGE_WRITE). It is advice: a failure, or f closed
// meanwhile, shows in the fsync that follows or not at all.
func startWriteback(f *os.File, off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) { _ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE) })
}
