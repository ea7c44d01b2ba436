package export

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wharfdata/wharf/dataset"
)

// retire applies Export.Superseded once the run is certified: with SupersededMove, every part
// at the prefix that the new manifest does not list is moved out of the way of readers that
// read the whole directory: an earlier run's part under _superseded/<its run_id>/, one of this
// run's run id that its journal does not vouch for under _quarantine/<run_id>/ (M9). Each move
// is a copy, then a delete of the original; nothing is ever plainly deleted. A failure leaves
// the run succeeded and certified, and is returned: its earlier parts stay beside it until the
// next run moves them.
func (r *runner) retire(ctx context.Context) error {
	if r.e.Superseded != SupersededMove {
		return nil
	}
	fail := func(err error) error {
		return newErr("retire", r.rec.Prefix, ErrWrite, fmt.Errorf(
			"run %s succeeded and is certified, but earlier runs' parts stay beside its parts: %w", r.rec.RunID, err))
	}
	v, err := dataset.Validate(ctx, r.dst, r.rec.Prefix, false)
	if err != nil {
		return fail(err)
	}
	if !v.Certified || v.RunID != r.rec.RunID {
		return fail(errors.New("the prefix is not certified for this run: nothing is moved"))
	}
	listed := map[string]bool{}
	for _, p := range v.Manifest.Parts {
		listed[p.Key] = true
	}
	objs, err := r.dst.ListAll(ctx, "part-")
	if err != nil {
		return fail(err)
	}
	for _, o := range objs {
		if listed[o.Key] || strings.Contains(o.Key, "/") {
			continue
		}
		dst := dataset.SupersededDir + partRunID(o.Key) + "/" + o.Key
		if partRunID(o.Key) == r.rec.RunID {
			dst = dataset.QuarantineDir + r.rec.RunID + "/" + o.Key
		}
		if err := r.move(ctx, o.Key, dst); err != nil {
			return fail(err)
		}
		r.res.Superseded = append(r.res.Superseded, dst)
	}
	return nil
}

// move copies key to dst, then deletes key.
func (r *runner) move(ctx context.Context, key, dst string) error {
	if _, err := r.dst.Copy(ctx, key, dst, nil); err != nil {
		return err
	}
	return r.dst.Delete(ctx, key, nil)
}

// partRunID is the run id in a part's key, part-<run_id>-<chunk>.<ext>, or "unknown" for a
// key of another shape.
func partRunID(key string) string {
	rest := strings.TrimPrefix(key, "part-")
	if i := strings.LastIndexByte(rest, '-'); i > 0 {
		return rest[:i]
	}
	return "unknown"
}
