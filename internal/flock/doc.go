// Package flock takes advisory whole-file locks without blocking. A lock belongs to the open
// file description (flock(2)), so it orders the goroutines of one process that hold
// different descriptors of a file as well as separate processes, and it is released when
// the descriptor is closed or its process dies: a lock never outlives a crash.
//
// It is how the file store orders its writers, how a spool knows its owner and how a machine
// lease (package lease, on a single-writer store) excludes other processes. On platforms
// without flock every TryLock fails with ErrUnsupported, so nothing proceeds unlocked.
package flock
