package s3

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/wharfdata/wharf/store/driver"
)

// abortTimeout bounds aborting a failed multipart upload, on a context of its own since the
// caller's may be cancelled.
const abortTimeout = 30 * time.Second

// upload is one multipart upload in flight.
type upload struct {
	b        *Bucket
	key      string
	id       string
	opts     *driver.PutOptions
	partSize int64
	tokens   chan struct{} // one per part in flight: memory is bounded by Concurrency × PartSize
	// ra, when set, is the body read in place: each part is a section of it, sent without a
	// buffer (a local file's parts are read from the file as they are sent).
	ra io.ReaderAt

	mu    sync.Mutex
	parts []types.CompletedPart
	err   error
}

// putMultipart uploads body (after first, a part already read, when not nil) in parts. Any
// failure or cancellation aborts the upload; errors leave with Fault None.
func (b *Bucket) putMultipart(ctx context.Context, key string, body io.Reader, first []byte,
	opts *driver.PutOptions, partSize int64, conc int) (driver.ObjectInfo, error) {
	u := &upload{b: b, key: key, opts: opts, partSize: partSize, tokens: make(chan struct{}, conc)}
	if ra, ok := body.(io.ReaderAt); ok && first == nil && opts.Size > 0 {
		u.ra = ra
	}
	id, err := b.createUpload(ctx, key, opts)
	if err != nil {
		if first != nil {
			putBuf(first)
		}
		return driver.ObjectInfo{}, driver.WithoutFault(err)
	}
	u.id = id
	size, err := u.sendParts(ctx, body, first)
	if err == nil && opts.Size > 0 && size != opts.Size {
		err = &driver.Error{Op: "put", Key: key, Kind: driver.ErrUnavailable,
			Err: fmt.Errorf("reading the body: it had %d bytes, the put said %d: %w", size, opts.Size, io.ErrUnexpectedEOF)}
	}
	return u.finish(ctx, size, err)
}

// finish commits the upload when err (from sending its parts) is nil; otherwise, or when the
// commit fails, it aborts the upload. Errors leave with Fault None, or as ctx's own error once
// ctx is done.
func (u *upload) finish(ctx context.Context, size int64, err error) (driver.ObjectInfo, error) {
	var info driver.ObjectInfo
	if err == nil {
		info, err = u.complete(ctx, size)
	}
	if err != nil {
		u.abort(ctx)
		if ctx.Err() != nil {
			return driver.ObjectInfo{}, ctx.Err()
		}
		return driver.ObjectInfo{}, driver.WithoutFault(err)
	}
	return info, nil
}

func (b *Bucket) createUpload(ctx context.Context, key string, opts *driver.PutOptions) (string, error) {
	in := &s3.CreateMultipartUploadInput{
		Bucket:      aws.String(b.bucket),
		Key:         aws.String(key),
		ContentType: optString(opts.ContentType),
		Metadata:    opts.Metadata,
	}
	var id string
	err := b.policy.Do(ctx, driver.Request{Op: "put", Key: key, Replayable: true}, func(ctx context.Context) error {
		out, err := b.api.CreateMultipartUpload(ctx, in)
		if err != nil {
			return mapError(ctx, call{op: "put", key: key}, err)
		}
		id = aws.ToString(out.UploadId)
		return nil
	})
	return id, err
}

// part is one part's bytes: a pooled buffer filled from the body, or a section of a body
// read in place.
type part struct {
	buf []byte
	sec *io.SectionReader
}

func (p part) size() int64 {
	if p.sec != nil {
		return p.sec.Size()
	}
	return int64(len(p.buf))
}

// body returns a fresh reader of the part's bytes, for each attempt to send it.
func (p part) body() io.ReadSeeker {
	if p.sec != nil {
		return io.NewSectionReader(p.sec, 0, p.sec.Size())
	}
	return bytes.NewReader(p.buf)
}

// sendParts reads body into part buffers (or, read in place, cuts it into sections) and
// uploads up to cap(tokens) parts at once. It returns the number of bytes sent, or the first
// error (the others are cancelled).
func (u *upload) sendParts(ctx context.Context, body io.Reader, first []byte) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var total int64
	for n := int32(1); ; n++ {
		p, ok, last, err := u.nextPart(ctx, body, first, n)
		first = nil
		if err != nil {
			u.fail(err)
			break
		}
		if !ok {
			break
		}
		total += p.size()
		wg.Go(func() {
			defer u.release(p)
			if err := u.sendPart(ctx, n, p); err != nil {
				u.fail(err)
				cancel()
			}
		})
		if last {
			break
		}
	}
	wg.Wait()
	u.mu.Lock()
	defer u.mu.Unlock()
	return total, u.err
}

// nextPart waits for a free slot and fills a buffer from body (or cuts the next section of a
// body read in place). ok is false when body is done; last is true when this part ends it.
func (u *upload) nextPart(ctx context.Context, body io.Reader, first []byte, n int32) (p part, ok, last bool, err error) {
	if first != nil {
		u.tokens <- struct{}{}
		return part{buf: first}, true, false, nil
	}
	if n > maxParts {
		return part{}, false, false, &driver.Error{Op: "put", Key: u.key, Kind: driver.ErrUnsupported,
			Err: fmt.Errorf("body exceeds %d parts of %d bytes: give a larger part size", maxParts, u.partSize)}
	}
	select {
	case u.tokens <- struct{}{}:
	case <-ctx.Done():
		return part{}, false, false, ctx.Err()
	}
	if u.failed() {
		<-u.tokens
		return part{}, false, false, ctx.Err()
	}
	if u.ra != nil {
		off := int64(n-1) * u.partSize
		m := min(u.partSize, u.opts.Size-off)
		return part{sec: io.NewSectionReader(u.ra, off, m)}, true, off+m >= u.opts.Size, nil
	}
	buf := getBuf(u.partSize)
	m, err := io.ReadFull(body, buf)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		if m == 0 && n > 1 {
			u.release(part{buf: buf})
			return part{}, false, true, nil
		}
		return part{buf: buf[:m]}, true, true, nil
	case err != nil:
		u.release(part{buf: buf})
		return part{}, false, false, driver.BodyError(ctx, "put", u.key, err)
	}
	return part{buf: buf}, true, false, nil
}

func (u *upload) release(p part) {
	if p.buf != nil {
		putBuf(p.buf)
	}
	<-u.tokens
}

func (u *upload) fail(err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err == nil {
		u.err = err
	}
}

func (u *upload) failed() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err != nil
}

// sendPart uploads one part, retried alone under the policy.
func (u *upload) sendPart(ctx context.Context, n int32, p part) error {
	return u.part(ctx, "put", n, func(ctx context.Context) (*string, error) {
		out, err := u.b.api.UploadPart(ctx, &s3.UploadPartInput{
			Bucket:        aws.String(u.b.bucket),
			Key:           aws.String(u.key),
			UploadId:      aws.String(u.id),
			PartNumber:    aws.Int32(n),
			Body:          p.body(),
			ContentLength: aws.Int64(p.size()),
		})
		if err != nil {
			return nil, mapError(ctx, call{op: "put", key: u.key}, err)
		}
		return out.ETag, nil
	})
}

// part makes part n with send (one request, which returns the part's ETag), retried alone
// under the policy as an op request on the upload's key, and records it once made.
func (u *upload) part(ctx context.Context, op string, n int32, send func(context.Context) (*string, error)) error {
	var etag *string
	err := u.b.policy.Do(ctx, driver.Request{Op: op, Key: u.key, Replayable: true}, func(ctx context.Context) error {
		var err error
		etag, err = send(ctx)
		return err
	})
	if err != nil {
		return err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.parts = append(u.parts, types.CompletedPart{PartNumber: aws.Int32(n), ETag: etag})
	return nil
}

// complete commits the parts, carrying the put's condition. It runs as a conditional request:
// a lost answer is ErrOutcomeUnknown, never a resend.
func (u *upload) complete(ctx context.Context, size int64) (driver.ObjectInfo, error) {
	slices.SortFunc(u.parts, func(a, b types.CompletedPart) int {
		return int(aws.ToInt32(a.PartNumber) - aws.ToInt32(b.PartNumber))
	})
	in := &s3.CompleteMultipartUploadInput{
		Bucket:          aws.String(u.b.bucket),
		Key:             aws.String(u.key),
		UploadId:        aws.String(u.id),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: u.parts},
		IfMatch:         quoteETag(u.opts.IfMatch),
	}
	if u.opts.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	var etag *string
	c := call{op: "put", key: u.key, ifMatch: u.opts.IfMatch != ""}
	req := driver.Request{Op: "put", Key: u.key, Conditional: true, Replayable: true}
	err := u.b.policy.Do(ctx, req, func(ctx context.Context) error {
		out, err := u.b.api.CompleteMultipartUpload(ctx, in)
		if err != nil {
			return mapError(ctx, c, err)
		}
		etag = out.ETag
		return nil
	})
	if err != nil {
		return driver.ObjectInfo{}, err
	}
	return putInfo(u.key, size, etag, u.opts), nil
}

// abort ends the upload so that no parts stay billed, on a fresh context. A failure is
// logged (without credentials); the upload id lets an operator find it.
func (u *upload) abort(ctx context.Context) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	req := driver.Request{Op: "put", Key: u.key, Replayable: true}
	err := u.b.policy.Do(actx, req, func(ctx context.Context) error {
		_, err := u.b.api.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
			Bucket: aws.String(u.b.bucket), Key: aws.String(u.key), UploadId: aws.String(u.id),
		})
		return mapError(ctx, call{op: "put", key: u.key}, err)
	})
	if err != nil {
		u.b.log.Warn("aborting a multipart upload failed", "bucket", u.b.bucket, "key", u.key,
			"upload_id", u.id, "error", err)
	}
}
