package export

import (
	"context"
	"errors"

	"github.com/wharfdata/wharf/store"
)

// reconcile decides, per chunk, what the run does (M9), and returns the indexes to write:
//   - skip: committed in the journal and its part intact at the prefix (same size and ETag);
//   - rewrite: pending, in progress, or committed but its part is missing;
//   - quarantine, then rewrite: an object sits where the part belongs but the journal does not
//     vouch for it (untracked, or committed with another size or ETag). It is copied verbatim
//     to _quarantine/<run_id>/<key> and only then deleted.
//
// A fresh run has no objects at its keys and writes every chunk.
func (r *runner) reconcile(ctx context.Context, chunks []*ChunkRecord) ([]int, error) {
	r.prog.Chunks = len(chunks)
	var todo []int
	for i, c := range chunks {
		if !r.res.Resumed {
			todo = append(todo, i)
			continue
		}
		keep, err := r.reconcileChunk(ctx, c)
		if err != nil {
			return nil, err
		}
		if keep {
			r.res.Skipped = append(r.res.Skipped, c.Part.Key)
			r.progress(c.Part)
			continue
		}
		c.Status, c.Part = "pending", Part{}
		todo = append(todo, i)
	}
	return todo, nil
}

func (r *runner) reconcileChunk(ctx context.Context, c *ChunkRecord) (keep bool, err error) {
	key := partKey(r.rec.RunID, c.Index, r.e.Format)
	info, err := r.dst.Head(ctx, key)
	if errors.Is(err, store.ErrNotExist) || r.absentDir(err) {
		return false, nil // rewrite
	}
	if err != nil {
		return false, err
	}
	if c.Status == "committed" && c.Part.Key == key && info.Size == c.Part.Size && info.ETag == c.Part.ETag {
		return true, nil
	}
	return false, r.quarantine(ctx, key)
}

// quarantine moves key under _quarantine/<run_id>/: a copy (server-side where the store can),
// then a delete of the original. A failed copy deletes nothing.
func (r *runner) quarantine(ctx context.Context, key string) error {
	if err := r.beforeWrite(ctx); err != nil {
		return err
	}
	dst := QuarantineDir + r.rec.RunID + "/" + key
	if _, err := r.dst.Copy(ctx, key, dst, nil); err != nil {
		return newErr("quarantine", key, ErrWrite, err)
	}
	if err := r.dst.Delete(ctx, key, nil); err != nil {
		return newErr("quarantine", key, ErrWrite, err)
	}
	r.res.Quarantined = append(r.res.Quarantined, dst)
	r.o.log().Warn("export: quarantined an object where a part belongs", "export", r.e.Name, "run_id", r.rec.RunID, "key", key, "to", dst)
	return nil
}
