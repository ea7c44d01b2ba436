//go:build !linux

package boottime

import "time"

// now is the monotonic clock where no boot clock is read.
func now() time.Duration { return monotonic() }
