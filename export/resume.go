package export

import (
	"context"
	"errors"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/store"
)

// reconcile decides, per chunk, what the run does (M9), and returns the indexes to write:
//   - skip: committed in the journal and its part intact at the prefix (same size and ETag;
//     and on a store whose ETags do not prove content, a local directory, same sha256);
//   - rewrite: pending, in progress, or committed but its part is missing;
//   - quarantine, then rewrite: an object sits where the part belongs but the journal does not
//     vouch for it (untracked, or committed with another size, ETag or sha256). It is copied
//     verbatim to _quarantine/<run_id>/<key> and only then deleted.
//
// Before a chunk is rewritten, the incomplete uploads the interrupted run left at its key (a
// multipart upload killed mid-part) are aborted. A fresh run has no objects at its keys and
// writes every chunk.
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
		r.abortStale(ctx, partKey(r.rec.RunID, c.Index, r.e.Format))
		c.Status, c.Part = "pending", Part{}
		todo = append(todo, i)
	}
	return todo, nil
}

func (r *runner) reconcileChunk(ctx context.Context, c *ChunkRecord) (keep bool, err error) {
	key := partKey(r.rec.RunID, c.Index, r.e.Format)
	info, err := r.dst.Head(ctx, key)
	if errors.Is(err, store.ErrNotExist) {
		return false, nil // rewrite
	}
	if err != nil {
		return false, err
	}
	if c.Status == "committed" && c.Part.Key == key && info.Size == c.Part.Size && info.ETag == c.Part.ETag {
		if !r.dst.VerifyByHash() {
			return true, nil
		}
		sum, err := dataset.HashObject(ctx, r.dst, key, info.ETag)
		if err != nil {
			return false, newErr("resume", key, ErrWrite, err)
		}
		if sum == c.Part.SHA256 {
			return true, nil
		}
		r.o.log().Warn("export: a committed part's bytes changed in place", "export", r.e.Name, "run_id", r.rec.RunID,
			"key", key, "sha256", sum, "journaled_sha256", c.Part.SHA256)
	}
	return false, r.quarantine(ctx, key)
}

// abortStale aborts the incomplete uploads at key before its chunk is rewritten: a run killed
// in the middle of a multipart upload leaves it open, and billed. They are this run's own: the
// key holds its run id, and this process, resuming it, has no upload under way. A store that
// cannot list uploads has none to abort; a failure to list or abort is logged and does not
// hold the resume back.
func (r *runner) abortStale(ctx context.Context, key string) {
	ups, err := r.dst.ListUploads(ctx, key)
	switch {
	case errors.Is(err, store.ErrUnsupported):
		return
	case err != nil:
		r.o.log().Warn("export: could not list the incomplete uploads the interrupted run may have left", "export", r.e.Name,
			"run_id", r.rec.RunID, "key", key, "error", err)
		return
	}
	for _, u := range ups {
		if u.Key != key {
			continue
		}
		if err := r.dst.AbortUpload(ctx, u); err != nil {
			r.o.log().Warn("export: could not abort an incomplete upload the interrupted run left", "export", r.e.Name,
				"run_id", r.rec.RunID, "key", key, "upload_id", u.ID, "error", err)
			continue
		}
		r.res.Aborted = append(r.res.Aborted, key)
		r.o.log().Info("export: aborted an incomplete upload the interrupted run left", "export", r.e.Name,
			"run_id", r.rec.RunID, "key", key, "upload_id", u.ID, "initiated", u.Initiated)
	}
}

// quarantine moves key under _quarantine/<run_id>/: a copy (server-side where the store can),
// then a delete of the original. A failed copy deletes nothing.
func (r *runner) quarantine(ctx context.Context, key string) error {
	if err := r.beforeWrite(ctx); err != nil {
		return err
	}
	dst := dataset.QuarantineDir + r.rec.RunID + "/" + key
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
