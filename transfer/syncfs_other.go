//go:build !linux

package transfer

import "os"

// haveSyncFS says whether syncFS flushes the whole file system. Other systems have no
// syncfs(2): there DurableAtEnd fsyncs each file as DurableEach does.
const haveSyncFS = false

// syncFS flushes f alone.
func syncFS(f *os.File) error { return f.Sync() }

// startWriteback does nothing: the fsync before the rename writes everything.
func startWriteback(*os.File, int64, int64) {}
