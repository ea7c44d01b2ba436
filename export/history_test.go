package export

import (
	"context"
	"errors"
	"os"
	"testing"
)

// A history reads the journal named by the state, and never makes one: a state file that
// is not there holds no run and is still not there afterwards. With state: bucket it reads
// each export's log, filtered by name and newest first.
func TestHistoryReadsWhereTheStateSays(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 30, 10)
	h := History{StatePath: f.state, Exports: []Export{f.exp}}
	if runs, err := h.Runs(ctx, "", 0); err != nil || len(runs) != 0 {
		t.Fatalf("before any run: %v, %v", runs, err)
	}
	if last, err := h.LastRun(ctx, &f.exp); err != nil || last != nil {
		t.Fatalf("last run before any run: %+v, %v", last, err)
	}
	if _, err := os.Stat(f.state); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reading the history made the state file: %v", err)
	}
	f.mustRun(t)
	second := f.mustRun(t)
	last, err := h.LastRun(ctx, &f.exp)
	if err != nil || last == nil || last.RunID != second.RunID {
		t.Fatalf("last run: %+v, %v; want %s", last, err, second.RunID)
	}
	runs, err := h.Runs(ctx, "orders", 1)
	if err != nil || len(runs) != 1 || runs[0].RunID != second.RunID {
		t.Fatalf("runs --limit 1: %+v, %v", runs, err)
	}

	b := newFixture(t, 30, 10)
	res, err := b.run(t, bucketOpts(b, "node-a"))
	if err != nil {
		t.Fatal(err)
	}
	other := b.exp
	other.Name = "other"
	hb := History{StatePath: StateBucket, Exports: []Export{b.exp, other}}
	runs, err = hb.Runs(ctx, "", 0)
	if err != nil || len(runs) != 1 || runs[0].RunID != res.RunID {
		t.Fatalf("bucket runs: %+v, %v; want the one run %s", runs, err, res.RunID)
	}
	if runs, err := hb.Runs(ctx, "other", 0); err != nil || len(runs) != 0 {
		t.Fatalf("bucket runs of an export never run: %+v, %v", runs, err)
	}
	if last, err := hb.LastRun(ctx, &b.exp); err != nil || last == nil || last.RunID != res.RunID {
		t.Fatalf("bucket last run: %+v, %v", last, err)
	}
}
