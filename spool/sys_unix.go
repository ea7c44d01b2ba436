//go:build unix

package spool

import (
	"errors"
	"io/fs"
	"syscall"
)

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
