package export

import (
	"bytes"
	"context"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/store"
)

// settleUnfinished journals prev succeeded when its process wrote its certificate and was
// stopped before journaling it. With the state file a run is journaled succeeded (and a
// delta cursor advanced past its window) after its manifest and _SUCCESS are written, so a
// process killed between the two leaves a certified prefix that the journal calls running;
// the next run would abandon it and export its window again, certifying those rows twice.
// So the last run, still running, has its prefix read (two small reads, only then): a
// manifest of that run, succeeded, with the _SUCCESS that certifies its bytes, is what the
// run would have journaled. Anything else leaves prev as it is. With state: bucket the log
// certifies a run before its manifest is written, and the next holder settles it (settle).
func (r *runner) settleUnfinished(ctx context.Context, prev *RunRecord) (*RunRecord, error) {
	if prev == nil || prev.Status != StatusRunning || r.o.StatePath == StateBucket || prev.Prefix == "" {
		return prev, nil
	}
	s, err := store.Open(ctx, prev.Prefix, r.storeConfig())
	if err != nil {
		return prev, nil // not readable now: the run stays as the journal says
	}
	defer s.Close()
	b, found, err := dataset.ReadSmall(ctx, s, dataset.ManifestKey)
	if err != nil || !found {
		return prev, nil
	}
	m, err := dataset.DecodeManifest(b)
	if err != nil || m.RunID != prev.RunID || m.Status != StatusSucceeded {
		return prev, nil
	}
	if ok, found, err := dataset.ReadSmall(ctx, s, dataset.SuccessKey); err != nil || !found || !bytes.Equal(ok, dataset.SuccessBody(b)) {
		return prev, nil
	}
	done := *prev
	done.Status, done.Error, done.FinishedAt = StatusSucceeded, "", m.FinishedAt
	done.Rows, done.Parts, done.Bytes = m.Rows, len(m.Parts), m.Bytes
	if err := r.j.FinishRun(ctx, &done); err != nil {
		return prev, err
	}
	r.o.log().Warn("export: the last run wrote its certificate and stopped before journaling it: journaled succeeded",
		"export", r.e.Name, "run_id", done.RunID, "prefix", done.Prefix, "rows", done.Rows)
	return &done, nil
}
