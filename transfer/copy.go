package transfer

import (
	"context"
	"io"
	"os"
	"sync"

	"github.com/wharfdata/wharf/internal/atomicfile"
)

// readSize is what one read of a body asks for: at least the read buffer of the HTTP
// transport the stores use (256 KiB, store/driver.NewHTTPClient), so that net/http's
// bufio.Reader hands each read straight to the socket instead of filling its own buffer and
// copying out of it; a read of 64 KiB cost a copy of every byte (perf: runtime.memmove, 3 % of
// a large download's CPU).
const readSize = 256 << 10

// writeSize is the largest write into a file: the kernel's cost per byte of a write into the
// page cache rises with its size when many files are written at once (bench/README.md).
const writeSize = 64 << 10

var copyBufs = sync.Pool{New: func() any { b := make([]byte, readSize+writeSize); return &b }}

// copyCtx copies r to w. It reads until it holds at least writeSize bytes (a TLS connection
// gives 16 KiB a read), each read with room for readSize, then writes them in pieces of at
// most writeSize; ctx is checked between reads. A failure of w is an *atomicfile.WriteError,
// so that callers tell the destination's failures from the source's; a failure of r is
// returned as it is.
func copyCtx(ctx context.Context, w io.Writer, r io.Reader) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		nr, rerr := fillTo(r, buf, writeSize)
		for off := 0; off < nr; {
			nw, werr := w.Write(buf[off:min(off+writeSize, nr)])
			n += int64(nw)
			off += nw
			switch {
			case werr != nil:
				return n, &atomicfile.WriteError{Err: werr}
			case nw == 0:
				return n, &atomicfile.WriteError{Err: io.ErrShortWrite}
			}
		}
		switch {
		case rerr == io.EOF:
			return n, nil
		case rerr != nil:
			return n, rerr
		}
	}
}

// fillTo reads from r into buf until it holds at least want bytes, r fails (io.EOF included)
// or r gives nothing without an error (ctx is checked again then).
func fillTo(r io.Reader, buf []byte, want int) (int, error) {
	n := 0
	for n < want {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil || m == 0 {
			return n, err
		}
	}
	return n, nil
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
