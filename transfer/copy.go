package transfer

import (
	"context"
	"io"
	"sync"
)

// bufSize is the chunk size of copyCtx: large enough that a 4 KiB file is one read and a
// large one costs few system calls.
const bufSize = 256 << 10

var bufs = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

// writeError marks a failure of the writer in copyCtx, as opposed to the reader.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// copyCtx copies r to w in chunks from a shared pool, checking ctx between chunks. A failure of
// w is a *writeError; a failure of r is returned as it is.
func copyCtx(ctx context.Context, w io.Writer, r io.Reader) (int64, error) {
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	buf := *bp
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		nr, rerr := r.Read(buf)
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
