package azure

import (
	"context"

	"github.com/wharfdata/wharf/store/driver"
)

// ListBuckets lists the account's containers, following every page. Azure records no
// creation time for a container.
func (c *Container) ListBuckets(ctx context.Context) ([]driver.BucketInfo, error) {
	var out []driver.BucketInfo
	pager := c.service.NewListContainersPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, c.mapError(ctx, call{op: "list-buckets", key: c.loc.String()}, err)
		}
		for _, it := range page.ContainerItems {
			out = append(out, driver.BucketInfo{Name: deref(it.Name)}) // Azure keeps no creation time
		}
	}
	return out, nil
}
