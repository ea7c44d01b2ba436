package transfer

import (
	"context"
	"io"
	"os"

	"github.com/wharfdata/wharf/internal/atomicfile"
)

// copyCtx copies r to w (atomicfile.Copy: 64 KiB chunks, ctx checked between them; a failure
// of w is an *atomicfile.WriteError, one of r is returned as it is).
func copyCtx(ctx context.Context, w io.Writer, r io.Reader) (int64, error) {
	return atomicfile.Copy(ctx, w, r)
}

// writebackChunk is how many bytes a writeback lets pile up before it asks the kernel to
// start writing them out.
const writebackChunk = 8 << 20

// flushers bounds the writeback requests in flight: sync_file_range(2) blocks while the
// disk's queue is full, so it runs off the copying goroutine, and a request that finds every
// slot taken is dropped (the disk is busy anyway; the fsync before the rename writes what is
// left).
var flushers = make(chan struct{}, 4)

// writer returns the writer of f's bytes from offset off on, through w: one that starts
// their writeback as they arrive when the mode will fsync them, w itself otherwise.
func (l *Local) writer(w io.Writer, f *os.File, off int64) io.Writer {
	if l.Durability == DurableNone {
		return w
	}
	return &writeback{w: w, f: f, off: off}
}

// writeback passes writes to w (writing f from offset off on) and, every writebackChunk bytes,
// asks the kernel to start writing those pages to disk: the disk works while the network is
// read, and the fsync before the rename has little left to do.
type writeback struct {
	w   io.Writer
	f   *os.File
	off int64 // where the bytes not yet handed to the kernel start
	n   int64 // bytes written since off
}

func (b *writeback) Write(p []byte) (int, error) {
	n, err := b.w.Write(p)
	b.n += int64(n)
	if b.n >= writebackChunk {
		select {
		case flushers <- struct{}{}:
			go func(off, n int64) {
				defer func() { <-flushers }()
				startWriteback(b.f, off, n)
			}(b.off, b.n)
		default:
		}
		b.off += b.n
		b.n = 0
	}
	return n, err
}
