//go:build unix

package flock

import (
	"errors"
	"os"
	"syscall"
)

// TryLock takes a shared (or, with exclusive, an exclusive) lock on f without blocking; busy
// reports that another holder has a lock that conflicts.
func TryLock(f *os.File, exclusive bool) (busy bool, err error) {
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

// Unlock releases the lock f holds, if any.
func Unlock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
