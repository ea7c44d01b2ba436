package transfer

import (
	"context"
	"io"
	"os"
	"sync"
)

// bufSize is the chunk size of copyCtx: a 4 KiB file is one read, and a large one costs
// few system calls. Larger is slower: downloading 16 files of 64 MiB from MinIO with 128 or
// 256 KiB chunks took 3.2-4.3 s of system time against 0.6-0.8 s with 64 KiB (and 1.0-1.3 s
// with 16 or 32 KiB); the kernel's cost per byte of a write into the page cache rises with
// the size of the write (bench/README.md).
const bufSize = 64 << 10

var bufs = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

// writeError marks a failure of the writer in copyCtx, as opposed to the reader.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// copyCtx copies r to w in chunks from a shared pool, each filled before it is written,
// checking ctx between chunks. A failure of w is a *writeError; a failure of r is returned as
// it is.
func copyCtx(ctx context.Context, w io.Writer, r io.Reader) (int64, error) {
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	buf := *bp
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		nr, rerr := fill(r, buf)
		if nr > 0 {
			nw, werr := w.Write(buf[:nr])
			n += int64(nw)
			if werr != nil {
				return n, &writeError{werr}
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

// fill reads from r until buf is full or r fails (io.EOF included): fewer, larger writes.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
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
