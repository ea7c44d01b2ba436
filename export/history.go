package export

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
)

// History reads the runs of exports where the state says they are recorded: the local
// journal at statePath, or each export's commit log when statePath is StateBucket. It writes
// only verifications (RecordVerification), and never makes a journal: a state file that does
// not exist, or a log never written, holds no run.
type History struct {
	// StatePath is the state file, or StateBucket.
	StatePath string
	// Exports are the exports whose logs a StateBucket history reads (each its own state root).
	Exports []Export
}

// Runs returns the runs of the export named name (every export for ""), newest first, at
// most limit (0: all).
func (h History) Runs(ctx context.Context, name string, limit int) ([]RunRecord, error) {
	if h.StatePath != StateBucket {
		j, err := h.journal(ctx)
		if j == nil || err != nil {
			return nil, err
		}
		defer j.Close()
		return j.Runs(ctx, name, limit)
	}
	var runs []RunRecord
	for i := range h.Exports {
		e := &h.Exports[i]
		if name != "" && e.Name != name {
			continue
		}
		rs, err := LoggedRuns(ctx, e, &e.Store)
		if err != nil {
			return nil, fmt.Errorf("runs %s: %w", e.Name, err)
		}
		runs = append(runs, rs...)
	}
	slices.SortStableFunc(runs, func(a, b RunRecord) int { return b.StartedAt.Compare(a.StartedAt) })
	if limit > 0 && len(runs) > limit {
		runs = runs[:limit]
	}
	return runs, nil
}

// LastRun returns the last recorded run of e, or nil.
func (h History) LastRun(ctx context.Context, e *Export) (*RunRecord, error) {
	if h.StatePath == StateBucket {
		runs, err := LoggedRuns(ctx, e, &e.Store)
		if err != nil || len(runs) == 0 {
			return nil, err
		}
		return &runs[0], nil
	}
	j, err := h.journal(ctx)
	if j == nil || err != nil {
		return nil, err
	}
	defer j.Close()
	return j.LastRun(ctx, e.Name)
}

// journal opens the state file, or returns nil when there is none (it is not created).
func (h History) journal(ctx context.Context) (*Journal, error) {
	if _, err := os.Stat(h.StatePath); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return OpenJournal(ctx, h.StatePath)
}

// RecordVerification records v as the last verification of e's run runID in the local
// journal, which Runs then returns with the run, and reports whether it was recorded. It is
// not when the journal does not hold the run, when there is no state file (none is made),
// or under StateBucket: a commit log is written only under the export's writer lease, and a
// verification is not worth taking it, so bucket state records no verification.
func (h History) RecordVerification(ctx context.Context, e *Export, runID string, v Verification) (bool, error) {
	if h.StatePath == StateBucket || runID == "" {
		return false, nil
	}
	j, err := h.journal(ctx)
	if j == nil || err != nil {
		return false, err
	}
	defer j.Close()
	return j.RecordVerification(ctx, e.Name, runID, v)
}
