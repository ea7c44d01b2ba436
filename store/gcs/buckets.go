package gcs

import (
	"context"
	"errors"

	"google.golang.org/api/iterator"

	"github.com/wharfdata/wharf/store/driver"
)

// ListBuckets lists the buckets of the project (GOOGLE_CLOUD_PROJECT, else the
// service-account key's, else an emulator's default), following every page.
func (b *Bucket) ListBuckets(ctx context.Context) ([]driver.BucketInfo, error) {
	project, err := b.projectID(ctx)
	if err != nil {
		return nil, err
	}
	c := call{op: "list-buckets", key: "gs://"}
	var out []driver.BucketInfo
	it := b.client.Buckets(ctx, project)
	for {
		attrs, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, mapError(ctx, c, err)
		}
		out = append(out, driver.BucketInfo{Name: attrs.Name, Created: attrs.Created})
	}
}
