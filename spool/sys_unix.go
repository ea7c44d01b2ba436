//go:build unix

package spool

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// tryLock takes an flock on f without blocking; busy reports that another holder has it.
// flock locks belong to the open file description, so they order the goroutines of one process
// holding different descriptors as well as separate processes.
func tryLock(f *os.File, exclusive bool) (busy bool, err error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR) {
		return true, nil
	}
	return false, err
}

func unlock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// fileID identifies a file on this machine: its device and inode, and how many names it has.
type fileID struct {
	dev, ino uint64
	nlink    uint64
}

func idOf(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), nlink: uint64(st.Nlink)}, true
}

// linkUnsupported reports whether a hard link failed because it cannot be made here (another
// file system, or one without hard links), so that a copy must do instead.
func linkUnsupported(err error) bool {
	return errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) ||
		errors.Is(err, syscall.EMLINK) || errors.Is(err, syscall.ENOSYS)
}

// writableDir reports whether the process may create and remove entries in dir.
func writableDir(dir string) error {
	return syscall.Access(dir, 0x2|0x1) // W_OK|X_OK
}
