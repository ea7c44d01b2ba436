// Package sleep waits a while, or less when the caller's context ends: the one
// context-aware sleep every retry loop, poll and backoff in wharf uses.
//
// It promises: For returns nil once d has passed and ctx's error as soon as ctx ends,
// whichever comes first (a d of zero or less returns ctx's error, nil while it runs, at
// once); Or also returns nil as soon as its wake channel is ready; neither leaves a timer
// behind.
package sleep
