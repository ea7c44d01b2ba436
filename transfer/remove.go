package transfer

import (
	"context"
	"strings"

	"github.com/wharfdata/wharf/store"
)

// RemoveBatch is how many keys Remove hands the store at once (S3 DeleteObjects takes up to
// 1,000).
const RemoveBatch = 1000

// Remove deletes every key of s under prefix that takes takes (given its name below prefix;
// nil takes every key), a batch at a time as the listing goes (with dryRun, deletes nothing), and hands each key to removed once the store has confirmed its
// batch: what removed sees is gone. It returns how many keys it removed (or would have); a
// failure stops it, the batches before it removed.
func Remove(ctx context.Context, s *store.Store, prefix string, takes func(name string) bool, dryRun bool, removed func(key string) error) (int, error) {
	var batch []string
	n := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if !dryRun {
			if err := s.DeleteMany(ctx, batch); err != nil {
				return err
			}
		}
		for _, k := range batch {
			if err := removed(k); err != nil {
				return err
			}
		}
		n += len(batch)
		batch = batch[:0]
		return nil
	}
	for o, err := range s.Walk(ctx, prefix) {
		if err != nil {
			return n, err
		}
		if takes != nil && !takes(strings.TrimPrefix(o.Key, prefix)) {
			continue
		}
		if batch = append(batch, o.Key); len(batch) == RemoveBatch {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	return n, flush()
}
