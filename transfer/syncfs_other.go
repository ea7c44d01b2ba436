//go:build !linux

package transfer

import "os"

// syncFS flushes f; other systems have no syncfs(2), and f is a directory here, so the files
// written into it were each fsynced by Put (NoSync is ignored).
func syncFS(f *os.File) error { return f.Sync() }

// startWriteback does nothing: the fsync before the rename writes everything.
func startWriteback(*os.File, int64, int64) {}
