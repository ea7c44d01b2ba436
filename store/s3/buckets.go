package s3

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wharfdata/wharf/store/driver"
)

// ListBuckets lists the buckets the credentials own at the endpoint, following every page.
func (b *Bucket) ListBuckets(ctx context.Context) ([]driver.BucketInfo, error) {
	var out []driver.BucketInfo
	in := &s3.ListBucketsInput{}
	for {
		page, err := b.api.ListBuckets(ctx, in)
		if err != nil {
			return nil, mapError(ctx, call{op: "list-buckets", key: b.loc.String()}, err)
		}
		for _, bk := range page.Buckets {
			out = append(out, driver.BucketInfo{Name: aws.ToString(bk.Name), Created: aws.ToTime(bk.CreationDate)})
		}
		if aws.ToString(page.ContinuationToken) == "" {
			return out, nil
		}
		in.ContinuationToken = page.ContinuationToken
	}
}
