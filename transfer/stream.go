package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/wharfdata/wharf/store"
)

// errSize is the cause of a size mismatch: the source changed while it was copied.
var errSize = errors.New("size mismatch: the source changed while it was copied")

// stream copies one task through a Get and a Put. A copy to a Local directory returns its
// complete temporary file for the caller to commit.
func (r *runner) stream(ctx context.Context, t Task) (store.ObjectInfo, *pending, error) {
	if l, ok := r.dst.(*Local); ok {
		// A download to local disk buffers nothing, and so holds no slot.
		if t.Size >= 2*r.o.ReadPartSize && r.o.Parts > 1 {
			return r.download(ctx, l, t)
		}
		return r.toLocal(ctx, l, t)
	}
	info, err := r.toStore(ctx, t)
	return info, nil, err
}

// toLocal copies one object into a temporary file of l.
func (r *runner) toLocal(ctx context.Context, l *Local, t Task) (store.ObjectInfo, *pending, error) {
	obj, err := r.src.Get(ctx, t.Src, nil)
	if err != nil {
		return store.ObjectInfo{}, nil, err
	}
	defer obj.Close()
	body := newCounter(obj.ReadCloser, r.o.Progress)
	opts := r.putOptions(obj.Info.Size)
	p, n, err := l.write(ctx, t.Dst, body, opts)
	if err != nil {
		return store.ObjectInfo{}, nil, err
	}
	info := store.ObjectInfo{Key: t.Dst, Size: n}
	if err := verify(body, obj.Info.Size, info); err != nil {
		p.abort()
		return info, nil, &store.Error{Op: "put", Key: p.path, Kind: store.ErrUnavailable, Err: fmt.Errorf("from %s: %w", t.Src, err)}
	}
	return info, p, nil
}

// toStore copies one object into a store; large objects hold a slot of part buffers.
func (r *runner) toStore(ctx context.Context, t Task) (store.ObjectInfo, error) {
	held := false
	if t.Size > r.o.PartSize {
		if err := r.acquire(ctx); err != nil {
			return store.ObjectInfo{}, err
		}
		held = true
		defer r.release()
	}
	obj, err := r.src.Get(ctx, t.Src, nil)
	if err != nil {
		return store.ObjectInfo{}, err
	}
	defer obj.Close()
	size := obj.Info.Size
	if !held && size > r.o.PartSize {
		if err := r.acquire(ctx); err != nil {
			return store.ObjectInfo{}, err
		}
		defer r.release()
	}
	body := newCounter(obj.ReadCloser, r.o.Progress)
	opts := r.putOptions(size)
	store.Carry(opts, obj.Info) // content type, standard headers, metadata but the put-id
	info, err := r.dst.Put(ctx, t.Dst, body.reader(), opts)
	if errors.Is(err, store.ErrOutcomeUnknown) {
		info, err = r.resolve(ctx, t.Dst, err)
	}
	if err != nil {
		return info, err
	}
	if err := verify(body, size, info); err != nil {
		r.undo(t.Dst)
		return info, &store.Error{Op: "put", Key: t.Dst, Kind: store.ErrUnavailable, Err: fmt.Errorf("from %s: %w", t.Src, err)}
	}
	return info, nil
}

// verify checks that the put took exactly the size the source announced, and that the source
// has no byte beyond it.
func verify(body *counter, size int64, info store.ObjectInfo) error {
	if size < 0 {
		return nil
	}
	if body.at.Load() {
		// Read in place, in parts: the store's own size says what was sent.
		if info.Size != size {
			return fmt.Errorf("%w (announced %d bytes, stored %d)", errSize, size, info.Size)
		}
		var one [1]byte
		if n, _ := body.r.(io.ReaderAt).ReadAt(one[:], size); n > 0 {
			return fmt.Errorf("%w (announced %d bytes, but it has more)", errSize, size)
		}
		return nil
	}
	if body.n != size || info.Size != size {
		return fmt.Errorf("%w (announced %d bytes, read %d, stored %d)", errSize, size, body.n, info.Size)
	}
	var one [1]byte
	if n, _ := io.ReadFull(body.r, one[:]); n > 0 {
		return fmt.Errorf("%w (announced %d bytes, but it has more)", errSize, size)
	}
	return nil
}

// resolve settles a conditional put whose answer was lost (a server may answer 412 to an
// If-None-Match put before reading the body, and reset the connection) by one Head of its
// put-id: ours means it landed; another object means the condition failed.
func (r *runner) resolve(ctx context.Context, key string, err error) (store.ObjectInfo, error) {
	var e *store.Error
	s, ok := r.dst.(*store.Store)
	if !ok || !errors.As(err, &e) || e.PutID == "" {
		return store.ObjectInfo{}, err
	}
	info, landed, herr := s.ResolvePut(ctx, key, e.PutID)
	switch {
	case herr != nil:
		return store.ObjectInfo{}, err
	case landed:
		return info, nil
	case info.ETag != "":
		return store.ObjectInfo{}, &store.Error{Op: "put", Key: key, Kind: store.ErrPreconditionFailed,
			Err: errors.New("the object exists (the store refused the create before reading the body)")}
	}
	return store.ObjectInfo{}, err
}

// undo deletes a destination that failed verification after it was committed.
func (r *runner) undo(key string) {
	d, ok := r.dst.(interface {
		Delete(context.Context, string, *store.DeleteOptions) error
	})
	if ok {
		_ = d.Delete(context.Background(), key, nil)
	}
}

func (r *runner) acquire(ctx context.Context) error {
	select {
	case r.large <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *runner) release() { <-r.large }

// counter counts the bytes read through it and reports them as progress.
type counter struct {
	r  io.Reader
	n  int64
	p  Progress
	at atomic.Bool // read in place (ReadAt) by the put: n does not count those bytes
}

func newCounter(r io.Reader, p Progress) *counter { return &counter{r: r, p: p} }

func (c *counter) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if n > 0 {
		c.n += int64(n)
		c.p.Bytes(int64(n))
	}
	return n, err
}

// reader is c, seekable when the reader beneath is, so that a put of a local file can still
// be resent, while a stream never claims to seek; and readable in place when the reader
// beneath is a file, so that a multipart upload sends sections of it with no part buffers.
func (c *counter) reader() io.Reader {
	_, seeks := c.r.(io.Seeker)
	_, at := c.r.(io.ReaderAt)
	switch {
	case seeks && at:
		return &atCounter{seekCounter{c}}
	case seeks:
		return &seekCounter{c}
	}
	return c
}

type atCounter struct{ seekCounter }

// ReadAt reads in place, reporting progress; a part read again (a retry) is reported again.
func (c *atCounter) ReadAt(b []byte, off int64) (int, error) {
	c.at.Store(true)
	n, err := c.r.(io.ReaderAt).ReadAt(b, off)
	if n > 0 {
		c.p.Bytes(int64(n))
	}
	return n, err
}

type seekCounter struct{ *counter }

func (c *seekCounter) Seek(off int64, whence int) (int64, error) {
	pos, err := c.r.(io.Seeker).Seek(off, whence)
	if err == nil && pos != c.n {
		c.p.Bytes(pos - c.n)
		c.n = pos
	}
	return pos, err
}
