package main

import "runtime/debug"

// limitMemory sets the Go runtime's soft memory limit to the bound the job reports, and
// returns what puts the earlier limit back. A GOMEMLIMIT in the environment is the user's
// own limit, and wins: it is left as it is, for every command alike.
func (a *app) limitMemory(bound int64) (restore func()) {
	if a.getenv("GOMEMLIMIT") != "" || bound <= 0 {
		return func() {}
	}
	old := debug.SetMemoryLimit(bound)
	return func() { debug.SetMemoryLimit(old) }
}
