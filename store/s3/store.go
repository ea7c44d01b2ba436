package s3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/wharfdata/wharf/store/driver"
)

// api is the part of the SDK client a Bucket uses.
type api interface {
	GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	HeadObject(context.Context, *s3.HeadObjectInput, ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	HeadBucket(context.Context, *s3.HeadBucketInput, ...func(*s3.Options)) (*s3.HeadBucketOutput, error)
	PutObject(context.Context, *s3.PutObjectInput, ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	DeleteObject(context.Context, *s3.DeleteObjectInput, ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
	DeleteObjects(context.Context, *s3.DeleteObjectsInput, ...func(*s3.Options)) (*s3.DeleteObjectsOutput, error)
	ListObjectsV2(context.Context, *s3.ListObjectsV2Input, ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	ListBuckets(context.Context, *s3.ListBucketsInput, ...func(*s3.Options)) (*s3.ListBucketsOutput, error)
	CopyObject(context.Context, *s3.CopyObjectInput, ...func(*s3.Options)) (*s3.CopyObjectOutput, error)
	CreateBucket(context.Context, *s3.CreateBucketInput, ...func(*s3.Options)) (*s3.CreateBucketOutput, error)
	DeleteBucket(context.Context, *s3.DeleteBucketInput, ...func(*s3.Options)) (*s3.DeleteBucketOutput, error)
	CreateMultipartUpload(context.Context, *s3.CreateMultipartUploadInput, ...func(*s3.Options)) (*s3.CreateMultipartUploadOutput, error)
	UploadPart(context.Context, *s3.UploadPartInput, ...func(*s3.Options)) (*s3.UploadPartOutput, error)
	CompleteMultipartUpload(context.Context, *s3.CompleteMultipartUploadInput, ...func(*s3.Options)) (*s3.CompleteMultipartUploadOutput, error)
	AbortMultipartUpload(context.Context, *s3.AbortMultipartUploadInput, ...func(*s3.Options)) (*s3.AbortMultipartUploadOutput, error)
	UploadPartCopy(context.Context, *s3.UploadPartCopyInput, ...func(*s3.Options)) (*s3.UploadPartCopyOutput, error)
}

// Bucket is an S3 (or S3-compatible) bucket. It makes exactly one HTTP request per SDK call:
// retries are the store's RetryPolicy, applied by the portable store (store.Store) and, inside a
// multipart upload, by Bucket itself to each part.
type Bucket struct {
	api         api
	presigner   *s3.PresignClient
	anonymous   bool
	bucket      string
	loc         driver.Location
	target      target
	policy      *driver.RetryPolicy
	partSize    int64
	concurrency int
	log         *slog.Logger

	// bucketSeen is set once the bucket is known to exist. Some S3 implementations
	// (SeaweedFS) create a missing bucket on the first PutObject; wharf never does that
	// silently, so the first write of a Bucket checks that its bucket is there.
	bucketMu   sync.Mutex
	bucketSeen bool

	checksums atomic.Int32 // what the server did with a checksum header: checksumsUntried…
}

// New opens the bucket of loc (an s3:// or r2:// location) with o, which has passed Check. It
// reads credential references but makes no request.
func New(ctx context.Context, loc driver.Location, o *Options, c *driver.Common) (*Bucket, error) {
	client, t, err := newClient(ctx, loc, o, c)
	if err != nil {
		return nil, err
	}
	return &Bucket{
		api:         client,
		presigner:   s3.NewPresignClient(client),
		anonymous:   o.Anonymous,
		bucket:      loc.Bucket,
		loc:         loc.Root(),
		target:      t,
		policy:      c.RetryPolicy(),
		partSize:    o.PartSize,
		concurrency: o.Concurrency,
		log:         c.Log(),
	}, nil
}

// ETagsAreMD5 reports true: an object put whole in one request has the MD5 of its bytes as
// its ETag, on S3 (unless encrypted with a KMS key) and on the S3-compatible stores.
func (b *Bucket) ETagsAreMD5() bool { return true }

// Describe names the bucket and endpoint, never a credential.
func (b *Bucket) Describe() driver.Description {
	return driver.Description{Scheme: b.loc.Scheme, Location: b.loc.String(), Endpoint: b.target.endpoint}
}

// Close releases nothing: the HTTP client's idle connections close on their own.
func (b *Bucket) Close() error { return nil }

// MakeBucket creates the bucket. One that exists and is owned by the caller is success; one
// owned by another account is ErrForbidden.
func (b *Bucket) MakeBucket(ctx context.Context) error {
	in := &s3.CreateBucketInput{Bucket: aws.String(b.bucket)}
	if r := b.target.region; r != "us-east-1" && r != "auto" && b.target.endpoint == "" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{
			LocationConstraint: types.BucketLocationConstraint(r),
		}
	}
	_, err := b.api.CreateBucket(ctx, in)
	var owned *types.BucketAlreadyOwnedByYou
	if errors.As(err, &owned) {
		err = nil
	}
	if err == nil {
		b.sawBucket()
	}
	return mapError(ctx, call{op: "make-bucket", key: b.bucket}, err)
}

// maxPresign is the longest a SigV4 presigned URL can be valid for.
const maxPresign = 7 * 24 * time.Hour

// PresignGet signs a GetObject of key valid for expiry (at most 7 days, SigV4's limit). An
// anonymous store has no key to sign with. The URL is signed with the credentials the store
// holds now: temporary ones (a role, SSO) end it when they expire, whatever expiry says.
func (b *Bucket) PresignGet(ctx context.Context, key string, expiry time.Duration) (string, error) {
	switch {
	case b.anonymous:
		return "", &driver.Error{Op: "presign", Key: key, Kind: driver.ErrUnsupported,
			Err: errors.New("an anonymous store has no credentials to sign a URL with")}
	case expiry <= 0 || expiry > maxPresign:
		return "", &driver.Error{Op: "presign", Key: key, Kind: driver.ErrConfig,
			Err: fmt.Errorf("expiry %s: S3 signs URLs valid for at most 7 days", expiry)}
	}
	req, err := b.presigner.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key)},
		s3.WithPresignExpires(expiry))
	if err != nil {
		return "", mapError(ctx, call{op: "presign", key: key}, err)
	}
	return req.URL, nil
}

// RemoveBucket removes the bucket when it is empty: S3 refuses one holding objects (or, when
// versioned, object versions) with BucketNotEmpty, which is ErrBucketNotEmpty.
func (b *Bucket) RemoveBucket(ctx context.Context) error {
	_, err := b.api.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(b.bucket)})
	if err != nil {
		mapped := mapError(ctx, call{op: "remove-bucket", key: b.bucket}, err)
		var e *driver.Error
		if errors.As(mapped, &e) && e.Reason == "BucketNotEmpty" {
			e.Kind, e.Fault = driver.ErrBucketNotEmpty, driver.FaultNone
		}
		return mapped
	}
	b.bucketMu.Lock()
	b.bucketSeen = false
	b.bucketMu.Unlock()
	return nil
}

func (b *Bucket) sawBucket() {
	b.bucketMu.Lock()
	b.bucketSeen = true
	b.bucketMu.Unlock()
}

// checkBucket makes sure, once per Bucket, that the bucket exists before the first write
// (put, copy, delete): a missing bucket is ErrBucketMissing naming op and key, even on a
// server that would create the bucket on the fly.
func (b *Bucket) checkBucket(ctx context.Context, op, key string) error {
	b.bucketMu.Lock()
	seen := b.bucketSeen
	b.bucketMu.Unlock()
	if seen {
		return nil
	}
	_, err := b.api.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b.bucket)})
	if err == nil {
		b.sawBucket()
		return nil
	}
	mapped := mapError(ctx, call{op: op, key: key}, err)
	var e *driver.Error
	if errors.As(mapped, &e) && e.Status == 404 {
		e.Kind, e.Reason = driver.ErrBucketMissing, "NoSuchBucket"
		e.Err = fmt.Errorf("bucket %s does not exist (create it with wharf mb)", b.bucket)
	}
	if errors.As(mapped, &e) && e.Status == 403 {
		// Without s3:ListBucket the bucket's existence cannot be checked: let the write say.
		b.sawBucket()
		return nil
	}
	return mapped
}

// quoteETag returns the If-Match header value for etag, or nil for "".
func quoteETag(etag string) *string {
	switch {
	case etag == "":
		return nil
	case etag == "*" || strings.HasPrefix(etag, `"`):
		return aws.String(etag)
	}
	return aws.String(`"` + etag + `"`)
}

func unquote(etag *string) string { return strings.Trim(aws.ToString(etag), `"`) }

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}
