package gcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/wharfdata/wharf/store/driver"
)

// Upload sizes.
const (
	DefaultPartSize = 16 << 20                     // resumable chunk size when neither options nor config say
	minChunk        = googleapi.MinUploadChunkSize // 256 KiB: chunks are multiples of it
	copyBufferSize  = minChunk                     // also the most of an unknown-size body read ahead
)

// StorageClasses reports that GCS puts choose a storage class and a Cloud KMS key.
func (b *Bucket) StorageClasses() bool { return true }

// Put writes body at key through the SDK's Writer. A body that fits in one chunk (known size up
// to the chunk size, or unknown size ending within 256 KiB) is read whole first, then sent in
// one request carrying its CRC32C, which GCS checks before it stores anything. A larger body
// goes as a resumable upload in chunks of PartSize (rounded up to 256 KiB; default 16 MiB), one
// chunk in the SDK's buffer at a time. The put's condition (DoesNotExist, GenerationMatch) is
// set when the upload starts and GCS checks it when the upload completes. No request that
// completes an object is sent before the whole body has been read: a body that fails or comes
// out at another size than opts.Size, or a cancelled ctx, leaves nothing at key.
func (b *Bucket) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if body == nil {
		body = bytes.NewReader(nil)
	}
	c := call{op: "put", key: key}
	o, err := b.written(c, opts)
	if err != nil {
		return driver.ObjectInfo{}, err
	}
	if opts.Encryption.Mode != "" {
		return driver.ObjectInfo{}, &driver.Error{Op: "put", Key: key, Kind: driver.ErrUnsupported,
			Err: fmt.Errorf("GCS encrypts every object with keys it manages (no %s to ask for): for a key of yours give a Cloud KMS key's resource name as the KMS key id", opts.Encryption.Mode)}
	}
	chunk := b.chunkSize(opts)
	whole, rest, release, err := readAhead(body, opts.Size, chunk)
	defer release()
	if err != nil {
		return driver.ObjectInfo{}, b.putFailed(ctx, c, opts, err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := o.NewWriter(wctx)
	w.ContentType = opts.ContentType
	w.ForceEmptyContentType = opts.ContentType == "" // no sniffing: GCS records application/octet-stream
	w.Metadata = opts.Metadata
	w.CacheControl, w.ContentDisposition = opts.Headers.CacheControl, opts.Headers.ContentDisposition
	w.ContentEncoding, w.ContentLanguage = opts.Headers.ContentEncoding, opts.Headers.ContentLanguage
	w.StorageClass, w.KMSKeyName = opts.StorageClass, opts.Encryption.KMSKeyID
	ww := &startedWriter{w: w}
	n := int64(len(whole))
	if whole != nil {
		w.ChunkSize = 0 // one request, from memory
		w.CRC32C, w.SendCRC32C = crc32.Checksum(whole, castagnoli), true
		if len(whole) > 0 {
			_, err = ww.Write(whole)
		}
	} else {
		w.ChunkSize = chunk
		n, err = copyBody(ww, rest, opts.Size)
		if err == nil {
			err = sizeMismatch(n, opts.Size)
		}
	}
	if err != nil {
		abort(w, ww.started, cancel, err)
		return driver.ObjectInfo{}, b.putFailed(ctx, c, opts, err)
	}
	if err := w.Close(); err != nil {
		return driver.ObjectInfo{}, b.putFailed(ctx, c, opts, err)
	}
	info := objectInfo(key, w.Attrs())
	info.Size = n
	return info, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// readAhead reads a body that fits in one request whole: one of known size up to chunk bytes
// (checking it has exactly that many), or one of unknown size that ends within 256 KiB. For a
// larger body it returns the reader to stream from instead (what was read ahead, then the
// rest). release returns the buffer to its pool once the put is done.
func readAhead(body io.Reader, size int64, chunk int) (whole []byte, rest io.Reader, release func(), err error) {
	release = func() {}
	var buf []byte
	switch {
	case size > int64(chunk):
		return nil, body, release, nil
	case size > copyBufferSize:
		buf = make([]byte, size)
	default:
		p := copyBuffers.Get().(*[]byte)
		release = func() { copyBuffers.Put(p) }
		buf = *p
	}
	if size > 0 {
		n, err := io.ReadFull(body, buf[:size])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, nil, release, sizeMismatch(int64(n), size)
		}
		if err != nil {
			return nil, nil, release, &bodyError{err}
		}
		var one [1]byte
		if m, err := io.ReadFull(body, one[:]); m > 0 {
			return nil, nil, release, sizeMismatch(size+1, size)
		} else if err != io.EOF {
			return nil, nil, release, &bodyError{err}
		}
		return buf[:size], nil, release, nil
	}
	n, err := io.ReadFull(body, buf)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return buf[:n], nil, release, nil
	case err != nil:
		return nil, nil, release, &bodyError{err}
	}
	return nil, io.MultiReader(bytes.NewReader(buf), body), release, nil
}

// sizeMismatch is the error of a body of n bytes put with a known size (nil when they agree,
// or the size is unknown).
func sizeMismatch(n, size int64) error {
	switch {
	case size <= 0 || n == size:
		return nil
	case n < size:
		return &bodyError{fmt.Errorf("the body ended after %d bytes, the put said %d: %w", n, size, io.ErrUnexpectedEOF)}
	}
	return &bodyError{fmt.Errorf("the body is longer than the %d bytes the put said", size)}
}

// startedWriter notes whether the SDK's Writer has been written to, which starts its upload.
type startedWriter struct {
	w       io.Writer
	started bool
}

func (s *startedWriter) Write(p []byte) (int, error) {
	s.started = true
	return s.w.Write(p)
}

// abort stops an upload so that it never completes. The Writer streams into a pipe that its
// upload reads; closing the pipe (Close) is what completes the upload, so a failed put must
// end the pipe with an error first. Cancelling the Writer's context alone does that too, but
// asynchronously: a Close right after the cancel can win and complete the upload with what it
// had. So: the pipe ends with err, the in-flight request is cancelled, and Close waits for the
// upload to end (it returns the error; nothing was written). A Writer never written to never
// started an upload, and Close would start one: it is left alone.
func abort(w *storage.Writer, started bool, cancel context.CancelFunc, err error) {
	if started {
		//lint:ignore SA1019 the recommended context cancellation alone races with Close (see above)
		_ = w.CloseWithError(err)
	}
	cancel()
	if started {
		_ = w.Close()
	}
}

// chunkSize returns the resumable chunk size for one upload: options first, then the config,
// then DefaultPartSize, rounded up to a multiple of 256 KiB.
func (b *Bucket) chunkSize(opts *driver.PutOptions) int {
	size := opts.PartSize
	if size <= 0 {
		size = b.partSize
	}
	if size <= 0 {
		size = DefaultPartSize
	}
	size = (size + minChunk - 1) / minChunk * minChunk
	return int(size)
}

// bodyError is the caller's body failing, as opposed to the driver.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return "reading the body: " + e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// copyBody copies body into w, at most size+1 bytes when size is known (one more than said is
// enough to tell the body is too long). A read failure is a *bodyError.
func copyBody(w io.Writer, body io.Reader, size int64) (int64, error) {
	r := &readErrors{r: body}
	var src io.Reader = r
	if size > 0 {
		src = io.LimitReader(r, size+1)
	}
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	n, err := io.CopyBuffer(w, src, *buf)
	if r.err != nil {
		return n, &bodyError{r.err}
	}
	return n, err
}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, copyBufferSize); return &b }}

// readErrors remembers the error its reader failed with.
type readErrors struct {
	r   io.Reader
	err error
}

func (r *readErrors) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// putFailed maps a failed put: the caller's context error as is; the body's failure as
// ErrUnavailable wrapping it, never retried (the body is spent); the store's answer by
// mapError, where a 404 means the bucket (an upload cannot miss its object) unless the bucket
// is there, and then, on a replace-if-match, a failed condition.
func (b *Bucket) putFailed(ctx context.Context, c call, opts *driver.PutOptions, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var be *bodyError
	if errors.As(err, &be) {
		if driver.IsContext(be.err) {
			return be.err
		}
		return &driver.Error{Op: c.op, Key: c.key, Kind: driver.ErrUnavailable, Err: err}
	}
	mapped := b.notFound(ctx, c, mapError(ctx, c, err))
	var e *driver.Error
	if errors.As(mapped, &e) && e.Kind == driver.ErrNotExist {
		e.Kind = driver.ErrUnavailable
		if opts.IfMatch != "" {
			e.Kind = driver.ErrPreconditionFailed
		}
	}
	return mapped
}
