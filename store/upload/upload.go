package upload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/wharfdata/wharf/internal/crc32c"
	"github.com/wharfdata/wharf/store/driver"
)

// Parts is one upload in parts, as a backend makes it.
type Parts interface {
	// Send sends part n (from 1), size bytes that body holds, whose CRC-32C is crc
	// (crc32c.Format); for a resend the engine gives a fresh reader of the same bytes. Send
	// is called concurrently, one request per call.
	Send(ctx context.Context, n int, body io.ReadSeeker, size int64, crc string) error
	// Commit makes the object from parts 1 to n, carrying the put's condition; size is the
	// object's size and crc the CRC-32C of its bytes ("" when the engine did not send them:
	// a backend's copy in parts). It is one request; the engine decides about retries.
	Commit(ctx context.Context, n int, size int64, crc string) (driver.ObjectInfo, error)
	// Abort drops what was sent. It logs a failure; it never returns one.
	Abort(ctx context.Context)
}

// Limits are a backend's limits on parts, and the settings of one upload.
type Limits struct {
	PartSize    int64 // the part size asked for (options, the store's setting or the default)
	Concurrency int   // parts in flight for one upload
	MinPart     int64 // the smallest part the backend takes (but the last)
	MaxPart     int64 // the largest part it takes
	MaxParts    int   // the most parts of one object
	// SingleMax is the largest known size sent in one request; a known size below the part
	// size goes in one request too.
	SingleMax int64
}

// Backend is what the engine needs from a backend for one put.
type Backend struct {
	Policy *driver.RetryPolicy
	Limits Limits
	// Single sends body, of size bytes, in one request carrying the put's condition;
	// opts.CRC32C is the CRC-32C of those bytes, which the engine read before.
	Single func(ctx context.Context, body io.Reader, size int64, opts *driver.PutOptions) (driver.ObjectInfo, error)
	// Start begins an upload in parts with the put's content type, headers and metadata
	// (S3's CreateMultipartUpload: one request, which the engine retries). opts carries
	// the put-id the engine added.
	Start func(ctx context.Context, opts *driver.PutOptions) (Parts, error)
	// Head reads the key's current object, to settle a commit whose answer was lost.
	Head func(ctx context.Context) (driver.ObjectInfo, error)
	Log  *slog.Logger
}

// abortTimeout bounds aborting a failed upload, on a context of its own since the caller's
// may be cancelled.
const abortTimeout = 30 * time.Second

// Put writes body at key through b: in one request or in parts, as the package documentation
// says.
func Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions, b Backend) (driver.ObjectInfo, error) {
	if body == nil {
		body = bytes.NewReader(nil)
	}
	lim := b.Limits
	partSize := min(max(lim.PartSize, lim.MinPart), lim.MaxPart)
	if opts.Size > 0 && (opts.Size <= lim.SingleMax || opts.Size < partSize) {
		return single(ctx, key, body, opts.Size, opts, b)
	}
	if opts.Size > 0 {
		partSize = max(partSize, (opts.Size+int64(lim.MaxParts)-1)/int64(lim.MaxParts))
		return putParts(ctx, key, body, nil, opts, partSize, b)
	}
	first := getBuf(partSize)
	n, err := io.ReadFull(body, first)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		defer putBuf(first)
		return b.Single(ctx, bytes.NewReader(first[:n]), int64(n), withCRC(opts, crc32c.Sum(first[:n])))
	case err != nil:
		putBuf(first)
		return driver.ObjectInfo{}, driver.BodyError(ctx, "put", key, err)
	}
	return putParts(ctx, key, body, first, opts, partSize, b)
}

// smallBody is the size up to which a body sent in one request is read into a pooled buffer
// and sent from there even when it can seek: one read of a small file costs less than two.
const smallBody = 64 << 10

var smallBufs = sync.Pool{New: func() any { b := make([]byte, smallBody); return &b }}

// single sends body, of size bytes, in one request, once its CRC-32C is known: a body that
// can seek (over 64 KiB) is read once for it and rewound, any other is read into memory (at
// most Limits.SingleMax bytes) and sent from there.
func single(ctx context.Context, key string, body io.Reader, size int64, opts *driver.PutOptions, b Backend) (driver.ObjectInfo, error) {
	if s, ok := body.(io.ReadSeeker); ok && size > smallBody {
		pos, err := s.Seek(0, io.SeekCurrent)
		if err == nil {
			h := crc32c.New()
			var n int64
			n, err = io.CopyN(h, s, size)
			if err == nil {
				_, err = s.Seek(pos, io.SeekStart)
			} else if err == io.EOF {
				err = fmt.Errorf("it ended after %d of the %d bytes the put said: %w", n, size, io.ErrUnexpectedEOF)
			}
			if err != nil {
				return driver.ObjectInfo{}, driver.BodyError(ctx, "put", key, err)
			}
			return b.Single(ctx, body, size, withCRC(opts, h.Sum32()))
		}
	}
	var buf []byte
	if size <= smallBody {
		p := smallBufs.Get().(*[]byte)
		defer smallBufs.Put(p)
		buf = (*p)[:size]
	} else {
		buf = make([]byte, size)
	}
	if n, err := io.ReadFull(body, buf); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			err = fmt.Errorf("it ended after %d of the %d bytes the put said: %w", n, size, io.ErrUnexpectedEOF)
		}
		return driver.ObjectInfo{}, driver.BodyError(ctx, "put", key, err)
	}
	if _, seeks := body.(io.Seeker); !seeks {
		// A stream must end where the put said (a checked body fails at its end); a body
		// that can seek is read for size bytes, as a single request always sent it.
		if err := extraByte(body); err != nil {
			return driver.ObjectInfo{}, driver.BodyError(ctx, "put", key, err)
		}
	}
	return b.Single(ctx, bytes.NewReader(buf), size, withCRC(opts, crc32c.Sum(buf)))
}

// extraByte fails when a stream holds more than the put said: a single request sends exactly
// the size given, and a stream that goes on was measured wrong. A reader that fails at its end
// (a checksum that does not match) fails here too.
func extraByte(body io.Reader) error {
	var one [1]byte
	n, err := io.ReadFull(body, one[:])
	switch {
	case n > 0:
		return errors.New("it holds more bytes than the put said")
	case err == io.EOF:
		return nil
	}
	return err
}

// withCRC returns opts carrying crc as the body's CRC-32C.
func withCRC(opts *driver.PutOptions, crc uint32) *driver.PutOptions {
	o := *opts
	o.CRC32C = crc32c.Format(crc)
	return &o
}

// WithPutID returns opts carrying a wharf-put-id (its own, if it has one): every upload in
// parts carries one, so that a commit whose answer is lost can be settled.
func WithPutID(opts *driver.PutOptions) *driver.PutOptions {
	if opts.Metadata[driver.MetaPutID] != "" {
		return opts
	}
	o := *opts
	o.Metadata = maps.Clone(opts.Metadata)
	if o.Metadata == nil {
		o.Metadata = map[string]string{}
	}
	o.Metadata[driver.MetaPutID] = driver.NewPutID()
	return &o
}

// putParts sends body (after first, a part already read, when not nil) in parts of
// partSize and commits them.
func putParts(ctx context.Context, key string, body io.Reader, first []byte, opts *driver.PutOptions,
	partSize int64, b Backend) (driver.ObjectInfo, error) {
	opts = WithPutID(opts)
	var p Parts
	err := b.Policy.Do(ctx, driver.Request{Op: "put", Key: key, Replayable: true}, func(ctx context.Context) error {
		var err error
		p, err = b.Start(ctx, opts)
		return err
	})
	if err != nil {
		if first != nil {
			putBuf(first)
		}
		return driver.ObjectInfo{}, failed(ctx, err)
	}
	s := &sender{key: key, p: p, b: b, opts: opts, partSize: partSize,
		tokens: make(chan struct{}, max(b.Limits.Concurrency, 1))}
	if ra, ok := body.(io.ReaderAt); ok && first == nil && opts.Size > 0 {
		s.ra = ra
	}
	n, size, err := s.sendAll(ctx, body, first)
	if err == nil && opts.Size > 0 && size != opts.Size {
		err = &driver.Error{Op: "put", Key: key, Kind: driver.ErrUnavailable,
			Err: fmt.Errorf("reading the body: it had %d bytes, the put said %d: %w", size, opts.Size, io.ErrUnexpectedEOF)}
	}
	var crc string
	if err == nil {
		sum, ok := s.pieces.Sum(n)
		if !ok {
			err = fmt.Errorf("upload: a part of %s has no checksum", key)
		}
		crc = crc32c.Format(sum)
	}
	return Finish(ctx, key, p, n, size, crc, err, opts, b)
}

// Finish ends an upload in parts: when err (from filling its n parts) is nil it commits
// them (crc is the CRC-32C of their bytes, "" when not computed), settling a commit whose answer was lost by the put-id in opts (see the package
// documentation); otherwise, or when the commit fails, it aborts the upload. Backends that
// fill parts in other ways (S3's copy of a large object in UploadPartCopy parts) end them
// here too.
func Finish(ctx context.Context, key string, p Parts, n int, size int64, crc string, err error, opts *driver.PutOptions, b Backend) (driver.ObjectInfo, error) {
	var info driver.ObjectInfo
	if err == nil {
		info, err = commit(ctx, key, p, n, size, crc, opts, b)
	}
	if err != nil {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		defer cancel()
		p.Abort(actx)
		return driver.ObjectInfo{}, failed(ctx, err)
	}
	return info, nil
}

// commit commits the parts. It is sent as a conditional request: a lost answer is never
// resent blindly, but settled by the put-id; an unconditional commit that did not land is
// sent once more.
func commit(ctx context.Context, key string, p Parts, n int, size int64, crc string, opts *driver.PutOptions, b Backend) (driver.ObjectInfo, error) {
	send := func() (info driver.ObjectInfo, err error) {
		req := driver.Request{Op: "put", Key: key, Conditional: true, Replayable: true}
		err = b.Policy.Do(ctx, req, func(ctx context.Context) error {
			info, err = p.Commit(ctx, n, size, crc)
			return err
		})
		return info, err
	}
	info, err := send()
	if !isOutcomeUnknown(err) {
		return info, err
	}
	putID := opts.Metadata[driver.MetaPutID]
	got, landed, herr := driver.ResolvePut(ctx, func(ctx context.Context, _ string) (driver.ObjectInfo, error) {
		var info driver.ObjectInfo
		err := b.Policy.Do(ctx, driver.Request{Op: "head", Key: key, Replayable: true}, func(ctx context.Context) error {
			var err error
			info, err = b.Head(ctx)
			return err
		})
		return info, err
	}, key, putID)
	switch {
	case herr != nil:
		return driver.ObjectInfo{}, err
	case landed:
		got.Key = key
		return got, nil
	case opts.Conditional():
		return driver.ObjectInfo{}, withPutIDErr(err, putID)
	}
	b.Log.Debug("the answer to a commit was lost and it did not land: committing again", "key", key)
	return send()
}

func isOutcomeUnknown(err error) bool { return errors.Is(err, driver.ErrOutcomeUnknown) }

func withPutIDErr(err error, putID string) error {
	var e *driver.Error
	if errors.As(err, &e) && e.PutID == "" {
		c := *e
		c.PutID = putID
		return &c
	}
	return err
}

// failed is what leaves the engine: the context's error once ctx has ended, else err with its
// fault cleared (each request was already retried).
func failed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return driver.WithoutFault(err)
}

// Part buffers are pooled by size and reused across uploads.
var pools sync.Map // int64 → *sync.Pool of *[]byte

func getBuf(size int64) []byte {
	p, _ := pools.LoadOrStore(size, &sync.Pool{})
	if v := p.(*sync.Pool).Get(); v != nil {
		return *(v.(*[]byte))
	}
	return make([]byte, size)
}

func putBuf(b []byte) {
	b = b[:cap(b)]
	if p, ok := pools.Load(int64(len(b))); ok {
		p.(*sync.Pool).Put(&b)
	}
}
