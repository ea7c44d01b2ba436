package boottime

import "time"

var start = time.Now()

// monotonic is the monotonic reading of time.Now, since the process started.
func monotonic() time.Duration { return time.Since(start) }
