package s3

import (
	"cmp"
	"context"
	"io"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/upload"
)

// Upload sizes.
const (
	DefaultPartSize    = 16 << 20 // multipart part size when neither config nor options say
	MinPartSize        = 5 << 20  // S3's smallest part (but the last)
	maxPartSize        = 5 << 30  // S3's largest part
	singlePutMax       = 16 << 20 // a known size up to this goes in one PutObject
	DefaultConcurrency = 4        // parts in flight per upload
	maxParts           = 10000    // S3's most parts per upload
)

// Put writes body at key through the upload engine (package upload): a known size up to
// 16 MiB (or below the part size) in one PutObject; a larger or unknown-size body as a
// multipart upload, at most Concurrency parts of PartSize in memory (none for a body read in
// place), each part retried alone, the condition on CompleteMultipartUpload, the upload
// aborted on any failure or cancellation.
func (b *Bucket) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if err := b.checkBucket(ctx, "put", key); err != nil {
		return driver.ObjectInfo{}, err
	}
	return upload.Put(ctx, key, body, opts, b.engine(key, opts))
}

// engine is how the upload engine writes key on this bucket.
func (b *Bucket) engine(key string, opts *driver.PutOptions) upload.Backend {
	return upload.Backend{
		Policy: b.policy,
		Limits: upload.Limits{
			PartSize:    cmp.Or(opts.PartSize, b.partSize, DefaultPartSize),
			Concurrency: cmp.Or(opts.Concurrency, b.concurrency, DefaultConcurrency),
			MinPart:     MinPartSize, MaxPart: maxPartSize, MaxParts: maxParts, SingleMax: singlePutMax,
		},
		Single: func(ctx context.Context, body io.Reader, size int64, opts *driver.PutOptions) (driver.ObjectInfo, error) {
			return b.putSingle(ctx, key, body, size, opts)
		},
		Start: func(ctx context.Context, opts *driver.PutOptions) (upload.Parts, error) {
			return b.startUpload(ctx, key, opts)
		},
		Head: func(ctx context.Context) (driver.ObjectInfo, error) { return b.Head(ctx, key) },
		Log:  b.log,
	}
}

// putSingle sends body in one PutObject carrying the condition.
func (b *Bucket) putSingle(ctx context.Context, key string, body io.Reader, size int64, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	in := &s3.PutObjectInput{
		Bucket:        aws.String(b.bucket),
		Key:           aws.String(key),
		Body:          body,
		ContentLength: aws.Int64(size),
		ContentType:   optString(opts.ContentType),
		Metadata:      opts.Metadata,
		IfMatch:       quoteETag(opts.IfMatch),
	}
	setHeaders(opts.Headers, &in.CacheControl, &in.ContentDisposition, &in.ContentEncoding, &in.ContentLanguage)
	if opts.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	out, err := b.api.PutObject(ctx, in)
	if err != nil {
		return driver.ObjectInfo{}, mapError(ctx, call{op: "put", key: key, ifMatch: opts.IfMatch != ""}, err)
	}
	return putInfo(key, size, out.ETag, opts), nil
}

func putInfo(key string, size int64, etag *string, opts *driver.PutOptions) driver.ObjectInfo {
	return driver.ObjectInfo{Key: key, Size: size, ETag: unquote(etag), ContentType: opts.ContentType,
		Headers: opts.Headers, Metadata: opts.Metadata}
}

// setHeaders sets the request fields of the standard headers to h's, leaving unset those h
// does not give.
func setHeaders(h driver.Headers, cacheControl, disposition, encoding, language **string) {
	*cacheControl = optString(h.CacheControl)
	*disposition = optString(h.ContentDisposition)
	*encoding = optString(h.ContentEncoding)
	*language = optString(h.ContentLanguage)
}

// headersOf returns the standard headers of a response.
func headersOf(cacheControl, disposition, encoding, language *string) driver.Headers {
	return driver.Headers{
		CacheControl:       aws.ToString(cacheControl),
		ContentDisposition: aws.ToString(disposition),
		ContentEncoding:    aws.ToString(encoding),
		ContentLanguage:    aws.ToString(language),
	}
}

// multipart is one S3 multipart upload: the engine's Parts.
type multipart struct {
	b    *Bucket
	key  string
	id   string
	opts *driver.PutOptions

	mu    sync.Mutex
	parts []types.CompletedPart
}

var _ upload.Parts = (*multipart)(nil)

// startUpload creates a multipart upload with opts' content type, headers and metadata (one
// request).
func (b *Bucket) startUpload(ctx context.Context, key string, opts *driver.PutOptions) (*multipart, error) {
	in := &s3.CreateMultipartUploadInput{
		Bucket:      aws.String(b.bucket),
		Key:         aws.String(key),
		ContentType: optString(opts.ContentType),
		Metadata:    opts.Metadata,
	}
	setHeaders(opts.Headers, &in.CacheControl, &in.ContentDisposition, &in.ContentEncoding, &in.ContentLanguage)
	out, err := b.api.CreateMultipartUpload(ctx, in)
	if err != nil {
		return nil, mapError(ctx, call{op: "put", key: key}, err)
	}
	return &multipart{b: b, key: key, id: aws.ToString(out.UploadId), opts: opts}, nil
}

// Send uploads part n in one UploadPart.
func (u *multipart) Send(ctx context.Context, n int, body io.ReadSeeker, size int64) error {
	out, err := u.b.api.UploadPart(ctx, &s3.UploadPartInput{
		Bucket:        aws.String(u.b.bucket),
		Key:           aws.String(u.key),
		UploadId:      aws.String(u.id),
		PartNumber:    aws.Int32(int32(n)),
		Body:          body,
		ContentLength: aws.Int64(size),
	})
	if err != nil {
		return mapError(ctx, call{op: "put", key: u.key}, err)
	}
	u.record(n, out.ETag)
	return nil
}

// record notes that part n was made, with its ETag.
func (u *multipart) record(n int, etag *string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.parts = slices.DeleteFunc(u.parts, func(p types.CompletedPart) bool { return aws.ToInt32(p.PartNumber) == int32(n) })
	u.parts = append(u.parts, types.CompletedPart{PartNumber: aws.Int32(int32(n)), ETag: etag})
}

// Commit completes the upload with the parts made, carrying the put's condition.
func (u *multipart) Commit(ctx context.Context, _ int, size int64) (driver.ObjectInfo, error) {
	u.mu.Lock()
	parts := slices.Clone(u.parts)
	u.mu.Unlock()
	slices.SortFunc(parts, func(a, b types.CompletedPart) int {
		return int(aws.ToInt32(a.PartNumber) - aws.ToInt32(b.PartNumber))
	})
	in := &s3.CompleteMultipartUploadInput{
		Bucket:          aws.String(u.b.bucket),
		Key:             aws.String(u.key),
		UploadId:        aws.String(u.id),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
		IfMatch:         quoteETag(u.opts.IfMatch),
	}
	if u.opts.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	out, err := u.b.api.CompleteMultipartUpload(ctx, in)
	if err != nil {
		return driver.ObjectInfo{}, mapError(ctx, call{op: "put", key: u.key, ifMatch: u.opts.IfMatch != ""}, err)
	}
	return putInfo(u.key, size, out.ETag, u.opts), nil
}

// Abort ends the upload so that no parts stay billed. A failure is logged (without
// credentials); the upload id lets an operator find it.
func (u *multipart) Abort(ctx context.Context) {
	err := u.b.policy.Do(ctx, driver.Request{Op: "put", Key: u.key, Replayable: true}, func(ctx context.Context) error {
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
