package s3

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wharfdata/wharf/store/driver"
)

var _ driver.UploadLister = (*Bucket)(nil)

// uploadsAPI is the SDK call that lists multipart uploads. The *s3.Client that api holds has
// it; a fake that lacks it makes ListUploads unsupported.
type uploadsAPI interface {
	ListMultipartUploads(context.Context, *s3.ListMultipartUploadsInput, ...func(*s3.Options)) (*s3.ListMultipartUploadsOutput, error)
}

// ListUploads lists the multipart uploads under prefix that were started and neither
// completed nor aborted, following every page (ListMultipartUploads with its key and
// upload-id markers), each page retried alone under the policy.
//
// MinIO lists uploads for an exact key, and with no prefix those started since it last
// started; a prefix that is not a whole key finds none there.
func (b *Bucket) ListUploads(ctx context.Context, prefix string) ([]driver.Upload, error) {
	l, ok := b.api.(uploadsAPI)
	if !ok {
		return nil, &driver.Error{Op: "list-uploads", Key: prefix, Kind: driver.ErrUnsupported}
	}
	var out []driver.Upload
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(b.bucket)}
	if prefix != "" {
		in.Prefix = aws.String(prefix)
	}
	for {
		var page *s3.ListMultipartUploadsOutput
		err := b.policy.Do(ctx, driver.Request{Op: "list-uploads", Key: prefix, Replayable: true}, func(ctx context.Context) error {
			var err error
			page, err = l.ListMultipartUploads(ctx, in)
			return b.uploadsError(ctx, "list-uploads", prefix, err)
		})
		if err != nil {
			return nil, err
		}
		for _, u := range page.Uploads {
			out = append(out, driver.Upload{Key: aws.ToString(u.Key), ID: aws.ToString(u.UploadId), Initiated: aws.ToTime(u.Initiated)})
		}
		if !aws.ToBool(page.IsTruncated) {
			break
		}
		next := aws.ToString(page.NextKeyMarker)
		nextID := aws.ToString(page.NextUploadIdMarker)
		if next == "" || (next == aws.ToString(in.KeyMarker) && nextID == aws.ToString(in.UploadIdMarker)) {
			break // a server that says truncated but gives no way on: stop rather than loop
		}
		in.KeyMarker, in.UploadIdMarker = aws.String(next), aws.String(nextID)
	}
	slices.SortStableFunc(out, func(a, c driver.Upload) int {
		return cmp.Or(cmp.Compare(a.Key, c.Key), a.Initiated.Compare(c.Initiated))
	})
	return out, nil
}

// AbortUpload aborts the multipart upload u, retried under the policy. An upload that is no
// longer there (NoSuchUpload: completed, or aborted already) is success.
func (b *Bucket) AbortUpload(ctx context.Context, u driver.Upload) error {
	err := b.policy.Do(ctx, driver.Request{Op: "abort-upload", Key: u.Key, Replayable: true}, func(ctx context.Context) error {
		_, err := b.api.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
			Bucket: aws.String(b.bucket), Key: aws.String(u.Key), UploadId: aws.String(u.ID),
		})
		return b.uploadsError(ctx, "abort-upload", u.Key, err)
	})
	if errors.Is(err, driver.ErrNotExist) {
		return nil
	}
	return err
}

// uploadsError maps an error of the upload calls; a missing bucket names the bucket.
func (b *Bucket) uploadsError(ctx context.Context, op, key string, err error) error {
	mapped := mapError(ctx, call{op: op, key: key}, err)
	var e *driver.Error
	if errors.As(mapped, &e) && errors.Is(mapped, driver.ErrBucketMissing) {
		e.Key = b.bucket
		e.Err = fmt.Errorf("bucket %s does not exist", b.bucket)
	}
	return mapped
}
