package s3

import (
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wharfdata/wharf/store/driver"
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

// Put writes body at key. A body of known size up to 16 MiB (or below the part size) goes in
// one PutObject; a larger or unknown-size body goes multipart, at most Concurrency parts of
// PartSize in memory, each part retried alone by the policy, the condition on
// CompleteMultipartUpload, and the upload aborted on any failure or cancellation. An unknown
// size that fits in one part is buffered and sent in one PutObject.
func (b *Bucket) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if opts == nil {
		opts = &driver.PutOptions{}
	}
	if body == nil {
		body = bytes.NewReader(nil)
	}
	if err := b.checkBucket(ctx, "put", key); err != nil {
		return driver.ObjectInfo{}, err
	}
	partSize, conc := b.partSettings(opts)
	if opts.Size > 0 && (opts.Size <= singlePutMax || opts.Size < partSize) {
		return b.putSingle(ctx, key, body, opts.Size, opts)
	}
	if opts.Size > 0 {
		partSize = max(partSize, (opts.Size+maxParts-1)/maxParts)
		return b.putMultipart(ctx, key, body, nil, opts, partSize, conc)
	}
	first := getBuf(partSize)
	n, err := io.ReadFull(body, first)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		defer putBuf(first)
		return b.putSingle(ctx, key, bytes.NewReader(first[:n]), int64(n), opts)
	case err != nil:
		putBuf(first)
		return driver.ObjectInfo{}, driver.BodyError(ctx, "put", key, err)
	}
	return b.putMultipart(ctx, key, body, first, opts, partSize, conc)
}

// partSettings returns the part size and concurrency for one upload: options first, then the
// config, then the defaults; parts are at least 5 MiB.
func (b *Bucket) partSettings(opts *driver.PutOptions) (int64, int) {
	size := cmpOr(opts.PartSize, b.partSize, DefaultPartSize)
	size = min(max(size, MinPartSize), maxPartSize)
	conc := cmpOr(opts.Concurrency, b.concurrency, DefaultConcurrency)
	return size, max(conc, 1)
}

func cmpOr[T int | int64](vs ...T) T {
	for _, v := range vs {
		if v > 0 {
			return v
		}
	}
	return 0
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
	return driver.ObjectInfo{Key: key, Size: size, ETag: unquote(etag), ContentType: opts.ContentType, Metadata: opts.Metadata}
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
