//go:build !linux

package backfill

import (
	"io"
	"os"
	"os/signal"
	"syscall"
)

// recordStream is what the standard output sink writes to: a regular file is synced before
// each commit; anything else is written to as it is (only Linux tells how much of a pipe its
// reader has not read yet). A closed pipe becomes an error of the next write
// (EPIPE) rather than a SIGPIPE.
func recordStream(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok {
		return w
	}
	signal.Ignore(syscall.SIGPIPE)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		return fileStream{f}
	}
	return plainStream{f}
}
