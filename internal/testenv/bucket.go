package testenv

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// RemoveBucketOnCleanup removes bucket from the server when t ends: its objects, its open
// multipart uploads, then the bucket itself, so that a test leaves nothing on the servers a
// developer keeps running between runs. A bucket that is not there is fine; any other failure
// is logged, not fatal (the test has already passed or failed on its own account).
func (s S3Server) RemoveBucketOnCleanup(t testing.TB, bucket string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := s.RemoveBucket(ctx, bucket); err != nil {
			t.Logf("cleanup: removing bucket %s from %s: %v", bucket, s.Name, err)
		}
	})
}

func (s S3Server) client() *s3.Client {
	return s3.New(s3.Options{
		Region:                     s.Region,
		BaseEndpoint:               aws.String(s.Endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// RemoveBucket removes bucket from the server: its objects, its open multipart uploads, then
// the bucket. A bucket that is not there is no error.
func (s S3Server) RemoveBucket(ctx context.Context, bucket string) error {
	c := s.client()
	objects := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for objects.HasMorePages() {
		page, err := objects.NextPage(ctx)
		var missing *types.NoSuchBucket
		if errors.As(err, &missing) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]types.ObjectIdentifier, len(page.Contents))
		for i, o := range page.Contents {
			ids[i] = types.ObjectIdentifier{Key: o.Key}
		}
		out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket),
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
		if err != nil {
			return err
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return fmt.Errorf("deleting %d of its objects failed, %s first: %s", len(out.Errors), aws.ToString(e.Key), aws.ToString(e.Message))
		}
	}
	uploads, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err == nil {
		for _, u := range uploads.Uploads {
			_, _ = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: u.Key, UploadId: u.UploadId})
		}
	}
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	return err
}
