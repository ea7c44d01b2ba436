//go:build !unix

package flock

import (
	"fmt"
	"os"
)

// TryLock fails: this platform has no flock.
func TryLock(f *os.File, exclusive bool) (busy bool, err error) {
	return false, fmt.Errorf("locking %s: %w", f.Name(), ErrUnsupported)
}

// Unlock does nothing.
func Unlock(*os.File) {}
