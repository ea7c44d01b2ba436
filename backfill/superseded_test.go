package backfill

import (
	"context"
	"errors"
	"io"
	"testing"
)

// A worker that still reads a plan a replan superseded can neither take a split the later
// plan wrote (nor so commit one) nor finish the job: it learns that its plan is superseded.
func TestAWorkerOfASupersededPlanCommitsNothing(t *testing.T) {
	ctx := context.Background()
	src := memStore()
	fill(t, src, "logs/", 4, 20, "plain")
	put(t, src, "logs/bad.gz", []byte("not gzip at all"))
	cfg := testConfig("mem://src/logs/", "-")
	cfg.SplitMaxObjects, cfg.MaxAttempts = 1, 1
	coord := NewSolo()
	if _, err := runJob(ctx, t, cfg, coord, src, NewStdout(io.Discard, cfg.CommitInterval), false); !errors.Is(err, ErrQuarantined) {
		t.Fatalf("the first plan: %v, want its bad object quarantined", err)
	}
	first, err := readCurrent(ctx, coord)
	if err != nil || first.Generation != 1 {
		t.Fatalf("the first plan's record: %+v %v", first, err)
	}
	// The replan reads the quarantined split again, as generation 2.
	if _, err := runJob(ctx, t, cfg, coord, src, NewStdout(io.Discard, cfg.CommitInterval), true); !errors.Is(err, ErrQuarantined) {
		t.Fatalf("the replan: %v", err)
	}
	cur, err := readCurrent(ctx, coord)
	if err != nil || cur.Generation != 2 || cur.Plan != first.Plan {
		t.Fatalf("after the replan: %+v %v, want the same plan as generation 2", cur, err)
	}
	// A worker still holding generation 1.
	cfg.Node = "late"
	old, err := New(cfg, Options{Coordinator: coord, Source: src, Prefix: "logs/", Sink: NewStdout(io.Discard, cfg.CommitInterval)})
	if err != nil {
		t.Fatal(err)
	}
	if old.leases, err = coord.leaser(ctx, cfg.leaseConfig(), old.leaseLog); err != nil {
		t.Fatal(err)
	}
	if err := old.load(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := old.work(ctx); !errors.Is(err, errSuperseded) {
		t.Fatalf("the worker of the superseded plan worked: %v, want errSuperseded", err)
	}
	if done, err := old.ended(cur); !done || !errors.Is(err, errSuperseded) {
		t.Fatalf("the worker of the superseded plan finishing: %v %v, want errSuperseded", done, err)
	}
	if after, _ := readCurrent(ctx, coord); after.Generation != 2 || after.State != JobFailed {
		t.Fatalf("the job's record after the late worker: %+v", after)
	}
}
