package flock

import "errors"

// ErrUnsupported is returned by TryLock on a platform without file locks.
var ErrUnsupported = errors.New("file locking is not available on this platform")
