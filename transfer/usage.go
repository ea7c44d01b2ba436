package transfer

import (
	"context"

	"github.com/wharfdata/wharf/store"
)

// Usage is what a prefix holds: how many objects, and their bytes.
type Usage struct {
	Objects int64 `json:"objects"`
	Bytes   int64 `json:"bytes"`
}

// Sum lists every object under prefix, following every page, and adds up their count and
// sizes: `wharf du`. A failed listing is an error with what was counted so far, never a
// smaller total passed off as the whole.
func Sum(ctx context.Context, s *store.Store, prefix string) (Usage, error) {
	var u Usage
	for o, err := range s.Walk(ctx, prefix) {
		if err != nil {
			return u, err
		}
		u.Objects++
		u.Bytes += o.Size
	}
	return u, nil
}
