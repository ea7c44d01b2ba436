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
			return b.startUpload(ctx, key, opts, true)
		},
		Head: func(ctx context.Context) (driver.ObjectInfo, error) { return b.Head(ctx, key) },
		Log:  b.log,
	}
}

// putSingle sends body in one PutObject carrying the condition, the CRC-32C of its bytes
// (opts.CRC32C) in x-amz-checksum-crc32c for the server to check, and in wharf-crc32c, which
// ranged reads return too. A server that refuses the checksum header is sent the put again
// without it.
func (b *Bucket) putSingle(ctx context.Context, key string, body io.Reader, size int64, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	md := driver.WithCRC32C(opts.Metadata, opts.CRC32C)
	in := &s3.PutObjectInput{
		Bucket:        aws.String(b.bucket),
		Key:           aws.String(key),
		Body:          body,
		ContentLength: aws.Int64(size),
		ContentType:   optString(opts.ContentType),
		Metadata:      md,
		IfMatch:       quoteETag(opts.IfMatch),
	}
	setHeaders(opts.Headers, &in.CacheControl, &in.ContentDisposition, &in.ContentEncoding, &in.ContentLanguage)
	in.StorageClass = types.StorageClass(opts.StorageClass)
	in.ServerSideEncryption, in.SSEKMSKeyId = encryption(opts.Encryption)
	if opts.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	var pos int64
	if s, ok := body.(io.Seeker); ok {
		pos, _ = s.Seek(0, io.SeekCurrent)
	}
	if opts.CRC32C != "" && b.sendChecksums() {
		in.ChecksumCRC32C = aws.String(opts.CRC32C)
	}
	out, err := b.api.PutObject(ctx, in)
	if err != nil && in.ChecksumCRC32C != nil && checksumRefused(err) && rewind(body, pos) {
		// Sent again without it: only if that one is taken was the header what was refused.
		first := err
		in.ChecksumCRC32C = nil
		if out, err = b.api.PutObject(ctx, in); err == nil {
			b.refuseChecksums(first)
		}
	} else if err == nil && in.ChecksumCRC32C != nil {
		b.tookChecksum()
	}
	if err != nil {
		return driver.ObjectInfo{}, mapError(ctx, call{op: "put", key: key, ifMatch: opts.IfMatch != ""}, err)
	}
	info := putInfo(key, size, out.ETag, opts)
	info.Metadata = md
	return info, nil
}

func putInfo(key string, size int64, etag *string, opts *driver.PutOptions) driver.ObjectInfo {
	return driver.ObjectInfo{Key: key, Size: size, ETag: unquote(etag), ContentType: opts.ContentType,
		Headers: opts.Headers, Metadata: opts.Metadata}
}

// encryption returns the request fields of a put's server-side encryption: a KMS key id
// alone asks for aws:kms with it.
func encryption(e driver.Encryption) (types.ServerSideEncryption, *string) {
	mode := e.Mode
	if mode == "" && e.KMSKeyID != "" {
		mode = string(types.ServerSideEncryptionAwsKms)
	}
	return types.ServerSideEncryption(mode), optString(e.KMSKeyID)
}

// StorageClasses reports that S3 puts choose a storage class and an encryption.
func (b *Bucket) StorageClasses() bool { return true }

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
	// checksums: the upload was created with a full-object CRC-32C, so each part is sent
	// with its own and the commit with the whole object's, which the server checks.
	checksums bool

	mu    sync.Mutex
	parts []types.CompletedPart
}

var _ upload.Parts = (*multipart)(nil)

// startUpload creates a multipart upload with opts' content type, headers and metadata (one
// request); with checksums, one whose parts and whole carry their CRC-32C (FULL_OBJECT),
// unless the server refuses that: then one without.
func (b *Bucket) startUpload(ctx context.Context, key string, opts *driver.PutOptions, checksums bool) (*multipart, error) {
	in := &s3.CreateMultipartUploadInput{
		Bucket:      aws.String(b.bucket),
		Key:         aws.String(key),
		ContentType: optString(opts.ContentType),
		Metadata:    opts.Metadata,
	}
	setHeaders(opts.Headers, &in.CacheControl, &in.ContentDisposition, &in.ContentEncoding, &in.ContentLanguage)
	in.StorageClass = types.StorageClass(opts.StorageClass)
	in.ServerSideEncryption, in.SSEKMSKeyId = encryption(opts.Encryption)
	checksums = checksums && b.sendChecksums()
	if checksums {
		in.ChecksumAlgorithm, in.ChecksumType = types.ChecksumAlgorithmCrc32c, types.ChecksumTypeFullObject
	}
	out, err := b.api.CreateMultipartUpload(ctx, in)
	if err != nil && checksums && checksumRefused(err) {
		// Created again without them: only if that one is taken were they what was refused.
		first := err
		checksums = false
		in.ChecksumAlgorithm, in.ChecksumType = "", ""
		if out, err = b.api.CreateMultipartUpload(ctx, in); err == nil {
			b.refuseChecksums(first)
		}
	}
	if err != nil {
		return nil, mapError(ctx, call{op: "put", key: key}, err)
	}
	if checksums {
		b.tookChecksum()
	}
	return &multipart{b: b, key: key, id: aws.ToString(out.UploadId), opts: opts, checksums: checksums}, nil
}

// Send uploads part n in one UploadPart, with its CRC-32C when the upload has them.
func (u *multipart) Send(ctx context.Context, n int, body io.ReadSeeker, size int64, crc string) error {
	in := &s3.UploadPartInput{
		Bucket:        aws.String(u.b.bucket),
		Key:           aws.String(u.key),
		UploadId:      aws.String(u.id),
		PartNumber:    aws.Int32(int32(n)),
		Body:          body,
		ContentLength: aws.Int64(size),
	}
	if u.checksums {
		in.ChecksumCRC32C = aws.String(crc)
	}
	out, err := u.b.api.UploadPart(ctx, in)
	if err != nil {
		return mapError(ctx, call{op: "put", key: u.key}, err)
	}
	u.record(n, out.ETag, in.ChecksumCRC32C)
	return nil
}

// record notes that part n was made, with its ETag and CRC-32C (nil when not sent).
func (u *multipart) record(n int, etag, crc *string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.parts = slices.DeleteFunc(u.parts, func(p types.CompletedPart) bool { return aws.ToInt32(p.PartNumber) == int32(n) })
	u.parts = append(u.parts, types.CompletedPart{PartNumber: aws.Int32(int32(n)), ETag: etag, ChecksumCRC32C: crc})
}

// Commit completes the upload with the parts made, carrying the put's condition and, when
// the upload has checksums, the whole object's CRC-32C crc, which the server checks against
// the parts it holds.
func (u *multipart) Commit(ctx context.Context, _ int, size int64, crc string) (driver.ObjectInfo, error) {
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
	if u.checksums && crc != "" {
		in.ChecksumCRC32C, in.ChecksumType = aws.String(crc), types.ChecksumTypeFullObject
	}
	if u.opts.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	out, err := u.b.api.CompleteMultipartUpload(ctx, in)
	if err != nil {
		return driver.ObjectInfo{}, mapError(ctx, call{op: "put", key: u.key, ifMatch: u.opts.IfMatch != ""}, err)
	}
	info := putInfo(u.key, size, out.ETag, u.opts)
	if u.checksums {
		info.CRC32C = crc
	}
	return info, nil
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
