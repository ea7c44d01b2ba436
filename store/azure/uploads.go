package azure

import (
	"context"
	"errors"
	"slices"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/wharfdata/wharf/store/driver"
)

var _ driver.UploadLister = (*Container)(nil)

// ListUploads lists the blobs under prefix that have uncommitted blocks only: block uploads
// (Put Block) never committed by Put Block List, which a process killed mid-upload leaves.
// They are the blobs a listing with include=uncommittedblobs returns and a plain listing does
// not; each page of both is retried alone under the policy. Uncommitted blocks staged on a
// blob that is committed are not listed (Azure keeps no listing of them, and the next commit
// of that blob, or Azure itself after seven days, discards them). Upload.ID is empty.
func (c *Container) ListUploads(ctx context.Context, prefix string) ([]driver.Upload, error) {
	all, err := c.listNames(ctx, prefix, true)
	if err != nil {
		return nil, err
	}
	committed, err := c.listNames(ctx, prefix, false)
	if err != nil {
		return nil, err
	}
	var out []driver.Upload
	for _, u := range all {
		if _, ok := slices.BinarySearchFunc(committed, u.Key, func(a driver.Upload, k string) int {
			switch {
			case a.Key < k:
				return -1
			case a.Key > k:
				return 1
			}
			return 0
		}); !ok {
			out = append(out, u)
		}
	}
	return out, nil
}

// listNames lists the blobs under prefix (with those that have uncommitted blocks only, when
// uncommitted is set), in name order, as uploads started at their creation time.
func (c *Container) listNames(ctx context.Context, prefix string, uncommitted bool) ([]driver.Upload, error) {
	var out []driver.Upload
	var marker *string
	for {
		var resp container.ListBlobsFlatResponse
		err := c.policy.Do(ctx, driver.Request{Op: "list-uploads", Key: prefix, Replayable: true}, func(ctx context.Context) error {
			var err error
			resp, err = c.client.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{
				Prefix: optString(prefix), Marker: marker,
				Include: container.ListBlobsInclude{UncommittedBlobs: uncommitted},
			}).NextPage(ctx)
			return c.mapError(ctx, call{op: "list-uploads", key: prefix}, err)
		})
		if err != nil {
			return nil, err
		}
		if resp.Segment != nil {
			for _, it := range resp.Segment.BlobItems {
				u := driver.Upload{Key: deref(it.Name)}
				if p := it.Properties; p != nil {
					u.Initiated = deref(p.CreationTime)
					if u.Initiated.IsZero() {
						u.Initiated = deref(p.LastModified)
					}
				}
				out = append(out, u)
			}
		}
		if deref(resp.NextMarker) == "" {
			break
		}
		marker = resp.NextMarker
	}
	slices.SortStableFunc(out, func(a, b driver.Upload) int {
		switch {
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	return out, nil
}

// AbortUpload deletes the blob u.Key if it has uncommitted blocks only, discarding them. A
// blob that is committed by now (its upload finished) is left alone, and a blob that is gone
// is success. (Azurite ignores If-None-Match on Delete Blob, so the check is a Get Blob
// Properties, which answers BlobNotFound for an uncommitted blob, just before the delete: a
// commit landing between the two would be deleted, a window of one request that wharf's own
// uploads never open, since the ship aborts only the uploads at a key it is about to write.)
func (c *Container) AbortUpload(ctx context.Context, u driver.Upload) error {
	req := driver.Request{Op: "abort-upload", Key: u.Key, Replayable: true}
	err := c.policy.Do(ctx, req, func(ctx context.Context) error {
		_, err := c.blob(u.Key).GetProperties(ctx, nil)
		return c.mapError(ctx, call{op: "head", key: u.Key}, err) // a 404 without a code: no committed blob
	})
	switch {
	case err == nil:
		return nil // committed: not an incomplete upload any more
	case !errors.Is(err, driver.ErrNotExist):
		return err
	}
	err = c.policy.Do(ctx, req, func(ctx context.Context) error {
		_, err := c.blob(u.Key).Delete(ctx, nil)
		return c.mapError(ctx, call{op: "abort-upload", key: u.Key}, err)
	})
	if errors.Is(err, driver.ErrNotExist) {
		return nil
	}
	return err
}
