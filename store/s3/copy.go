package s3

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/upload"
)

// copyMax is the largest source one CopyObject copies (S3's limit); copyPartSize is the
// smallest part of a multipart copy (larger when the source would need more than maxParts).
// Variables, so that tests can copy in parts without 5 GiB objects.
var (
	copyMax      int64 = 5 << 30
	copyPartSize int64 = 512 << 20
)

// copyConcurrency is how many part copies are in flight: the server moves the bytes, so
// they cost wharf no memory.
const copyConcurrency = 8

// Copy copies src to dst server-side. opts.IfNoneMatch and opts.IfMatch go on the copy
// (MinIO ignores them on a single CopyObject). Without a content type, headers or metadata in
// opts the copy keeps the source's (MetadataDirective COPY). With any of them, S3 replaces all
// together (REPLACE): the source is read first (one HeadObject) for what opts leaves unset
// (driver.Carry), and the copy is pinned to the version read (x-amz-copy-source-if-match), so
// that the attributes of one version never land on the bytes of another. A missing src is
// ErrNotExist.
//
// One CopyObject copies at most 5 GiB. A larger source (opts.Size says so, or the server
// refuses the copy as too large) is copied as a multipart upload of UploadPartCopy parts,
// each pinned to the source's ETag; any failure aborts the upload (see copyParts).
func (b *Bucket) Copy(ctx context.Context, src, dst string, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if err := b.checkBucket(ctx, "copy", dst); err != nil {
		return driver.ObjectInfo{}, err
	}
	if opts.Size > copyMax {
		return b.copyParts(ctx, src, dst, opts)
	}
	in := &s3.CopyObjectInput{
		Bucket:     aws.String(b.bucket),
		Key:        aws.String(dst),
		CopySource: aws.String(b.bucket + "/" + escapeKey(src)),
		IfMatch:    quoteETag(opts.IfMatch),
	}
	if opts.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	if opts.Replaces() {
		if err := b.replacing(ctx, src, opts, in); err != nil {
			return driver.ObjectInfo{}, err
		}
	}
	out, err := b.api.CopyObject(ctx, in)
	if err != nil {
		if tooLargeToCopy(err) {
			return b.copyParts(ctx, src, dst, opts)
		}
		mapped := mapError(ctx, call{op: "copy", key: dst, ifMatch: opts.IfMatch != ""}, err)
		if in.CopySourceIfMatch != nil && !opts.Conditional() && errors.Is(mapped, driver.ErrPreconditionFailed) {
			return driver.ObjectInfo{}, sourceChanged(src, err)
		}
		return driver.ObjectInfo{}, mapped
	}
	info := driver.ObjectInfo{Key: dst}
	if r := out.CopyObjectResult; r != nil {
		info.ETag, info.LastModified = unquote(r.ETag), aws.ToTime(r.LastModified)
	}
	// The copy's answer has no size: a Head fills it in, when it still sees this copy.
	if head, err := b.Head(ctx, dst); err == nil && (info.ETag == "" || head.ETag == info.ETag) {
		info = head
	}
	return info, nil
}

// replacing makes in a copy that replaces the content type, headers and metadata: opts' where
// it gives them, else those of src as a HeadObject finds it now, the copy pinned to that
// version.
func (b *Bucket) replacing(ctx context.Context, src string, opts *driver.PutOptions, in *s3.CopyObjectInput) error {
	head, err := b.Head(ctx, src)
	if err != nil {
		var e *driver.Error
		if errors.As(err, &e) {
			e.Op = "copy"
		}
		return err
	}
	o := *opts
	driver.Carry(&o, head)
	in.MetadataDirective = types.MetadataDirectiveReplace
	in.ContentType = optString(o.ContentType)
	in.Metadata = o.Metadata
	if crc := cmp.Or(head.CRC32C, head.Metadata[driver.MetaCRC32C]); crc != "" {
		in.Metadata = driver.WithCRC32C(o.Metadata, crc) // the bytes are the source's: so is their checksum
	}
	setHeaders(o.Headers, &in.CacheControl, &in.ContentDisposition, &in.ContentEncoding, &in.ContentLanguage)
	in.CopySourceIfMatch = quoteETag(head.ETag)
	return nil
}

// sourceChanged is the failure of a copy pinned to a version of src that is no longer there.
func sourceChanged(src string, err error) error {
	return &driver.Error{Op: "copy", Key: src, Kind: driver.ErrPreconditionFailed,
		Err: fmt.Errorf("the source changed while it was being copied: %w", err)}
}

// escapeKey escapes a key for the CopySource header, keeping its slashes.
func escapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// tooLargeToCopy reports whether err is the server's refusal of a CopyObject whose source is
// over its size limit. S3 answers 400 InvalidRequest (a broad code, so the message decides);
// some compatible servers answer EntityTooLarge.
func tooLargeToCopy(err error) bool {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return false
	}
	return api.ErrorCode() == "EntityTooLarge" ||
		api.ErrorCode() == "InvalidRequest" && strings.Contains(api.ErrorMessage(), "copy source is larger than")
}

// copyParts copies src to dst as a multipart upload of UploadPartCopy parts, copyConcurrency
// at a time, each retried alone and pinned to the ETag src had when the copy began: a source
// replaced meanwhile fails the copy (ErrPreconditionFailed naming src) instead of splicing
// two versions. The upload takes the content type, headers and metadata that opts gives and
// the source's for the rest (driver.Carry). The commit carries opts' condition. Any failure or cancellation aborts the
// upload; errors leave with Fault None, so the copy as a whole is not replayed.
func (b *Bucket) copyParts(ctx context.Context, src, dst string, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	var head driver.ObjectInfo
	err := b.policy.Do(ctx, driver.Request{Op: "copy", Key: src, Replayable: true}, func(ctx context.Context) error {
		var err error
		head, err = b.Head(ctx, src)
		return err
	})
	if err != nil {
		return driver.ObjectInfo{}, driver.WithoutFault(err)
	}
	popts := *opts
	driver.Carry(&popts, head) // without the source's put-id: that names the write that made it
	popts = *upload.WithPutID(&popts)
	eng := b.engine(dst, &popts)
	var u *multipart
	err = b.policy.Do(ctx, driver.Request{Op: "copy", Key: dst, Replayable: true}, func(ctx context.Context) error {
		var err error
		u, err = b.startUpload(ctx, dst, &popts, false)
		return err
	})
	if err != nil {
		return driver.ObjectInfo{}, driver.WithoutFault(err)
	}
	n, err := u.copyParts(ctx, src, head)
	return upload.Finish(ctx, dst, u, n, head.Size, "", err, &popts, eng)
}

// copyPartSizeFor is the part size for a source of size bytes: copyPartSize, or more when
// that would take over maxParts parts (a 5 TiB source takes parts of 525 MiB).
func copyPartSizeFor(size int64) int64 {
	ps := copyPartSize
	if need := (size + maxParts - 1) / maxParts; need > ps {
		ps = (need + 1<<20 - 1) &^ (1<<20 - 1) // whole MiB
	}
	return ps
}

// copyParts copies every range of src into the upload, copyConcurrency at a time; it returns
// how many parts it made, or the first failure once the part copies in flight have stopped.
func (u *multipart) copyParts(ctx context.Context, src string, head driver.ObjectInfo) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ps := copyPartSizeFor(head.Size)
	slots := make(chan struct{}, copyConcurrency)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		n     int
	)
	for off := int64(0); off < head.Size && ctx.Err() == nil; off += ps {
		n++
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		part := n
		wg.Go(func() {
			defer func() { <-slots }()
			if err := u.copyPart(ctx, part, src, head.ETag, off, min(off+ps, head.Size)-1); err != nil {
				once.Do(func() { first = err })
				cancel()
			}
		})
	}
	wg.Wait()
	if first != nil {
		return n, first
	}
	return n, ctx.Err()
}

// copyPart copies bytes first to last of src (at etag) as part n, retried alone.
func (u *multipart) copyPart(ctx context.Context, n int, src, etag string, first, last int64) error {
	return u.b.policy.Do(ctx, driver.Request{Op: "copy", Key: u.key, Replayable: true}, func(ctx context.Context) error {
		out, err := u.b.api.UploadPartCopy(ctx, &s3.UploadPartCopyInput{
			Bucket:            aws.String(u.b.bucket),
			Key:               aws.String(u.key),
			UploadId:          aws.String(u.id),
			PartNumber:        aws.Int32(int32(n)),
			CopySource:        aws.String(u.b.bucket + "/" + escapeKey(src)),
			CopySourceRange:   aws.String(fmt.Sprintf("bytes=%d-%d", first, last)),
			CopySourceIfMatch: quoteETag(etag),
		})
		if err != nil {
			mapped := mapError(ctx, call{op: "copy", key: u.key}, err)
			if errors.Is(mapped, driver.ErrPreconditionFailed) {
				return sourceChanged(src, err)
			}
			return mapped
		}
		var etag *string
		if out.CopyPartResult != nil {
			etag = out.CopyPartResult.ETag
		}
		u.record(n, etag, nil)
		return nil
	})
}
