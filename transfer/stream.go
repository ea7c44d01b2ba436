package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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
	_, local := r.src.(*Local)
	var head <-chan string // the CRC-32C a Head finds, asked while the body is read
	if !local && obj.Info.CRC32C == "" && obj.Info.Size >= headForSum {
		c := make(chan string, 1)
		go func() { c <- r.wantedSum(ctx, t.Src, obj.Info) }()
		head = c
	}
	body := r.newCounter(obj, t)
	opts := r.putOptions(t, obj.Info.Size)
	var sum *sumWriter // the CRC-32C of what is written, for an object read from a store
	if !local {
		sum = new(sumWriter)
	}
	p, n, err := l.write(ctx, t.Dst, body, opts, sum)
	if err != nil {
		return store.ObjectInfo{}, nil, body.failure(err)
	}
	info := store.ObjectInfo{Key: t.Dst, Size: n}
	if err := verify(body, obj.Info.Size, info); err != nil {
		p.abort()
		return info, nil, body.mismatch(p.path, t.Src, err)
	}
	if !local {
		want := obj.Info.CRC32C
		if head != nil {
			want = <-head
		}
		if err := r.checkSum(t.Src, n, sum.crc, want); err != nil {
			p.abort()
			return info, nil, err
		}
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
	body := r.newCounter(obj, t)
	opts := r.putOptions(t, size)
	store.Carry(opts, obj.Info) // content type, standard headers, metadata but the put-id
	r.o.overlay(opts)
	if _, local := r.src.(*Local); !local {
		opts.CRC32C = obj.Info.CRC32C // the destination's put checks the bytes it read
		if opts.CRC32C == "" {
			r.unverified.Add(1)
		}
	}
	info, err := r.dst.Put(ctx, t.Dst, body.reader(), opts)
	if errors.Is(err, store.ErrOutcomeUnknown) {
		info, err = r.resolve(ctx, t.Dst, err)
	}
	if err != nil {
		return info, body.failure(err)
	}
	if err := verify(body, size, info); err != nil {
		r.undo(t.Dst)
		return info, body.mismatch(t.Dst, t.Src, err)
	}
	if opts.CRC32C != "" {
		r.verified.Add(1)
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

// counter counts the bytes read through it and reports them as progress. Reading a local
// file, it also watches the file's length against the size announced when the copy began:
// a file that ends early or goes on past it fails the read with ErrLocalChanged, which the
// store's retry policy never retries (a store error passes through a put unchanged), and
// which the copy reports instead of whatever the put made of it.
type counter struct {
	r  io.Reader
	n  int64
	p  Progress
	at atomic.Bool // read in place (ReadAt) by the put: n does not count those bytes

	path    string // the local file read, or "" for an object of a store
	size    int64  // its size when the copy began; -1 when unknown
	changed atomic.Pointer[store.Error]
}

func newCounter(r io.Reader, p Progress) *counter { return &counter{r: r, p: p, size: -1} }

// newCounter counts the body of obj, the source of t; a local file's length is watched.
func (r *runner) newCounter(obj *store.Object, t Task) *counter {
	c := newCounter(obj.ReadCloser, r.o.Progress)
	if l, ok := r.src.(*Local); ok && obj.Info.Size >= 0 {
		c.path, _ = l.Path(t.Src)
		c.size = obj.Info.Size
	}
	return c
}

func (c *counter) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if n > 0 {
		c.n += int64(n)
		c.p.Bytes(int64(n))
	}
	if c.path != "" {
		switch {
		case c.n > c.size:
			return n, c.change(false)
		case err == io.EOF && c.n < c.size:
			return n, c.change(true)
		}
	}
	return n, err
}

// change records that the local file changed (it ended early, or has more than its size),
// and returns the error that says so.
func (c *counter) change(shorter bool) error {
	now := "it has more now"
	if shorter {
		now = "it ended before that"
	}
	if fi, err := os.Stat(c.path); err == nil {
		now = fmt.Sprintf("it has %d now", fi.Size())
	}
	e := &store.Error{Op: "read", Key: c.path, Kind: ErrLocalChanged,
		Err: fmt.Errorf("it had %d bytes when the copy began, and %s", c.size, now)}
	c.changed.CompareAndSwap(nil, e)
	return c.changed.Load()
}

// failure is the error a copy reports when its put (or write) failed with err: that the
// local file changed, when it did, whatever the put made of it.
func (c *counter) failure(err error) error {
	if e := c.changed.Load(); e != nil && !store.IsContext(err) {
		return e
	}
	return err
}

// mismatch is the error of a copy that verify failed (the destination is dst): a change of
// the local file it read, or a store that gave or took other than it announced.
func (c *counter) mismatch(dst, src string, err error) error {
	if e := c.changed.Load(); e != nil {
		return e
	}
	if c.path != "" {
		return &store.Error{Op: "read", Key: c.path, Kind: ErrLocalChanged, Err: err}
	}
	return &store.Error{Op: "put", Key: dst, Kind: store.ErrUnavailable, Err: fmt.Errorf("from %s: %w", src, err)}
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
// Reading a local file, a read that ends before the announced size fails, and so does the
// read that reaches it when the file has a byte beyond: a file that changed is found before
// the upload is committed.
func (c *atCounter) ReadAt(b []byte, off int64) (int, error) {
	c.at.Store(true)
	ra := c.r.(io.ReaderAt)
	n, err := ra.ReadAt(b, off)
	if n > 0 {
		c.p.Bytes(int64(n))
	}
	if c.path == "" {
		return n, err
	}
	end := off + int64(n)
	switch {
	case n < len(b) && end < c.size:
		return n, c.change(true)
	case end == c.size && n > 0:
		var one [1]byte
		if m, _ := ra.ReadAt(one[:], end); m > 0 {
			return n, c.change(false)
		}
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
