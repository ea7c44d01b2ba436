package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/wharfdata/wharf/store/driver"
)

// maxDeleteBatch is the most keys one DeleteObjects request takes.
const maxDeleteBatch = 1000

// Get opens key, pinned to opts.IfMatch and limited to opts' byte range when given. The
// returned Info.Size is the whole object's size, also for a range read.
func (b *Bucket) Get(ctx context.Context, key string, opts *driver.GetOptions) (*driver.Object, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key), IfMatch: quoteETag(opts.IfMatch)}
	if opts.Offset > 0 || opts.Length > 0 {
		r := fmt.Sprintf("bytes=%d-", opts.Offset)
		if opts.Length > 0 {
			r += strconv.FormatInt(opts.Offset+opts.Length-1, 10)
		}
		in.Range = aws.String(r)
	}
	out, err := b.api.GetObject(ctx, in)
	if err != nil {
		return b.getFailed(ctx, key, opts, err)
	}
	info := objectInfo(key, out.ContentLength, out.ETag, out.LastModified, out.ContentType, out.Metadata)
	info.Headers = headersOf(out.CacheControl, out.ContentDisposition, out.ContentEncoding, out.ContentLanguage)
	if total, ok := driver.RangeTotal(aws.ToString(out.ContentRange)); ok {
		info.Size = total
	}
	return &driver.Object{Info: info, ReadCloser: out.Body}, nil
}

// getFailed maps a failed Get. A range starting at the end of the object (S3 answers 416) is
// an empty read, not an error: a resumed read that broke after its last byte lands there.
func (b *Bucket) getFailed(ctx context.Context, key string, opts *driver.GetOptions, err error) (*driver.Object, error) {
	mapped := b.notFound(ctx, call{op: "get", key: key}, err)
	var e *driver.Error
	if !errors.As(mapped, &e) || (e.Reason != "InvalidRange" && e.Status != 416) || opts.Offset == 0 {
		return nil, mapped
	}
	info, herr := b.Head(ctx, key)
	if herr != nil {
		return nil, herr
	}
	if opts.IfMatch != "" && info.ETag != strings.Trim(opts.IfMatch, `"`) {
		return nil, &driver.Error{Op: "get", Key: key, Kind: driver.ErrPreconditionFailed, Status: 412}
	}
	if info.Size > opts.Offset {
		return nil, mapped
	}
	return &driver.Object{Info: info, ReadCloser: io.NopCloser(strings.NewReader(""))}, nil
}

// Head returns key's metadata: ErrNotExist when the key is absent, ErrBucketMissing when the
// bucket is.
func (b *Bucket) Head(ctx context.Context, key string) (driver.ObjectInfo, error) {
	out, err := b.api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key),
		ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		return driver.ObjectInfo{}, b.notFound(ctx, call{op: "head", key: key}, err)
	}
	info := objectInfo(key, out.ContentLength, out.ETag, out.LastModified, out.ContentType, out.Metadata)
	info.Headers = headersOf(out.CacheControl, out.ContentDisposition, out.ContentEncoding, out.ContentLanguage)
	info.CRC32C = fullCRC(out.ChecksumCRC32C, out.ChecksumType)
	info.StorageClass = string(out.StorageClass)
	return info, nil
}

// notFound maps err; a not-found without the NoSuchKey code (every HEAD 404) is checked
// against the bucket, so that a missing bucket is ErrBucketMissing and never ErrNotExist.
func (b *Bucket) notFound(ctx context.Context, c call, err error) error {
	mapped := mapError(ctx, c, err)
	var e *driver.Error
	if !errors.As(mapped, &e) || e.Kind != driver.ErrNotExist || e.Reason == "NoSuchKey" {
		return mapped
	}
	_, herr := b.api.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b.bucket)})
	if herr == nil {
		return mapped
	}
	hm := mapError(ctx, call{op: c.op, key: c.key}, herr)
	var he *driver.Error
	if !errors.As(hm, &he) {
		return hm // the caller's context ended
	}
	if he.Status != 404 {
		return mapped // the bucket's state is unknown (403 without s3:ListBucket, say)
	}
	he.Kind, he.Reason = driver.ErrBucketMissing, "NoSuchBucket"
	return he
}

// Delete removes key; a missing key is success. opts.IfMatch makes it conditional where the
// server enforces it (MinIO does not).
func (b *Bucket) Delete(ctx context.Context, key string, opts *driver.DeleteOptions) error {
	if err := b.checkBucket(ctx, "delete", key); err != nil {
		return err
	}
	in := &s3.DeleteObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key)}
	in.IfMatch = quoteETag(opts.IfMatch)
	_, err := b.api.DeleteObject(ctx, in)
	err = mapError(ctx, call{op: "delete", key: key}, err)
	var e *driver.Error
	if errors.As(err, &e) && e.Reason == "NoSuchKey" {
		return nil
	}
	return err
}

// DeleteMany removes keys (bucket-relative: no prefix of the store's URL is added) with
// DeleteObjects, up to 1000 a request, each request under the retry policy. Missing keys are
// success. The first key the server refuses fails the call, naming it.
func (b *Bucket) DeleteMany(ctx context.Context, keys []string) error {
	if len(keys) > 0 {
		if err := b.checkBucket(ctx, "delete", keys[0]); err != nil {
			return err
		}
	}
	for start := 0; start < len(keys); start += maxDeleteBatch {
		batch := keys[start:min(start+maxDeleteBatch, len(keys))]
		req := driver.Request{Op: "delete", Key: batch[0], Replayable: true}
		err := b.policy.Do(ctx, req, func(ctx context.Context) error { return b.deleteBatch(ctx, batch) })
		if err != nil {
			return err
		}
	}
	return nil
}

func (b *Bucket) deleteBatch(ctx context.Context, keys []string) error {
	ids := make([]types.ObjectIdentifier, len(keys))
	for i, k := range keys {
		ids[i] = types.ObjectIdentifier{Key: aws.String(k)}
	}
	out, err := b.api.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: aws.String(b.bucket),
		Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
	})
	if err != nil {
		return mapError(ctx, call{op: "delete", key: keys[0]}, err)
	}
	for _, f := range out.Errors {
		code := aws.ToString(f.Code)
		if code == "NoSuchKey" {
			continue
		}
		kind, fault := classify(call{op: "delete"}, 0, code)
		return &driver.Error{Op: "delete", Key: aws.ToString(f.Key), Kind: kind, Fault: fault, Reason: code,
			Err: errors.New(aws.ToString(f.Message))}
	}
	return nil
}

// List returns one page of keys under opts.Prefix.
func (b *Bucket) List(ctx context.Context, opts *driver.ListOptions) (driver.Page, error) {
	in := &s3.ListObjectsV2Input{
		Bucket:            aws.String(b.bucket),
		Prefix:            optString(opts.Prefix),
		Delimiter:         optString(opts.Delimiter),
		ContinuationToken: optString(opts.Token),
	}
	if opts.MaxKeys > 0 {
		in.MaxKeys = aws.Int32(int32(min(opts.MaxKeys, 1000)))
	}
	out, err := b.api.ListObjectsV2(ctx, in)
	if err != nil {
		return driver.Page{}, mapError(ctx, call{op: "list", key: opts.Prefix}, err)
	}
	page := driver.Page{Objects: make([]driver.ObjectInfo, 0, len(out.Contents))}
	for _, o := range out.Contents {
		page.Objects = append(page.Objects, driver.ObjectInfo{
			Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), ETag: unquote(o.ETag),
			LastModified: aws.ToTime(o.LastModified),
		})
	}
	for _, p := range out.CommonPrefixes {
		page.Prefixes = append(page.Prefixes, aws.ToString(p.Prefix))
	}
	if aws.ToBool(out.IsTruncated) {
		page.Next = aws.ToString(out.NextContinuationToken)
	}
	return page, nil
}

func objectInfo(key string, size *int64, etag *string, mod *time.Time, ctype *string, md map[string]string) driver.ObjectInfo {
	info := driver.ObjectInfo{
		Key: key, Size: aws.ToInt64(size), ETag: unquote(etag),
		LastModified: aws.ToTime(mod), ContentType: aws.ToString(ctype),
	}
	if len(md) > 0 {
		info.Metadata = make(map[string]string, len(md))
		for k, v := range md {
			info.Metadata[strings.ToLower(k)] = v
		}
	}
	return info
}
