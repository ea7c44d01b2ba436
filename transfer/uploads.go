package transfer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/wharfdata/wharf/store"
)

// Pending is an incomplete upload as `wharf uploads` reports it.
type Pending struct {
	URL       string    `json:"url"`
	Key       string    `json:"key"`
	ID        string    `json:"id,omitempty"`
	Initiated time.Time `json:"initiated,omitzero"`
	Age       float64   `json:"age_seconds"` // 0 when the store gives no start time
}

// UploadsOptions say which incomplete uploads Uploads takes and what it does with them.
type UploadsOptions struct {
	OlderThan time.Duration // only those started longer ago (0: all; one without a start time is never older)
	Abort     bool          // abort each, discarding its parts
	DryRun    bool          // with Abort: abort nothing, report what would be aborted
	Now       time.Time     // the time ages are judged at (zero: now)
	Logger    *slog.Logger  // each failed abort is logged (nil: not logged)
}

// UploadsResult is what Uploads did.
type UploadsResult struct {
	Taken  int   // the uploads handed to each: listed, or aborted (or, with DryRun, that would be)
	Failed error // the first abort that failed (each is also logged); the others were still tried
}

// Uploads lists the incomplete uploads of s whose key starts with loc's key (s is opened at
// loc's root), keeps those o.OlderThan selects, aborts each when o.Abort (and not o.DryRun),
// and hands each one it listed or aborted to each, in key order. An upload that could not be
// aborted is skipped and the others are still tried (UploadsResult.Failed). The error is the
// listing's, naming loc, or the first from each, which stops at once.
func Uploads(ctx context.Context, s *store.Store, loc store.Location, o UploadsOptions, each func(Pending) error) (UploadsResult, error) {
	var res UploadsResult
	ups, err := s.ListUploads(ctx, loc.Key)
	if err != nil {
		return res, fmt.Errorf("%s: %w", loc, err)
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	for _, u := range ups {
		if o.OlderThan > 0 && (u.Initiated.IsZero() || now.Sub(u.Initiated) <= o.OlderThan) {
			continue
		}
		l := loc
		l.Key = u.Key
		in := Pending{URL: l.String(), Key: u.Key, ID: u.ID, Initiated: u.Initiated}
		if !u.Initiated.IsZero() {
			in.Age = max(now.Sub(u.Initiated), 0).Round(time.Second).Seconds()
		}
		if o.Abort && !o.DryRun {
			if err := s.AbortUpload(ctx, u); err != nil {
				err = fmt.Errorf("%s (upload %s): %w", in.URL, u.ID, err)
				if o.Logger != nil {
					o.Logger.Error("aborting an incomplete upload failed", "url", in.URL, "upload_id", u.ID, "error", err)
				}
				if res.Failed == nil {
					res.Failed = err
				}
				continue
			}
		}
		res.Taken++
		if err := each(in); err != nil {
			return res, err
		}
	}
	return res, nil
}
