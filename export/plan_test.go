package export

import (
	"context"
	"fmt"
	"testing"

	"github.com/wharfdata/wharf/dataset"
)

// TestPlanJournaledAsItGoesAndContinuedOnResume: a run plans while it writes, so a run that
// fails early leaves a plan that is not whole; the resume keeps the journaled chunks, plans
// the rest after the last of them, and the dataset is the same as one run's.
func TestPlanJournaledAsItGoesAndContinuedOnResume(t *testing.T) {
	f := newFixture(t, 100, 10)
	first, o := failAt(t, f, 35)
	ctx := context.Background()
	j, err := OpenJournal(ctx, f.state)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	complete, err := j.PlanComplete(ctx, first.RunID)
	if err != nil || complete {
		t.Fatalf("plan of the failed run: complete %v, %v; want a plan not yet whole", complete, err)
	}
	cs, err := j.Chunks(ctx, first.RunID)
	if err != nil || len(cs) < 4 || len(cs) >= 10 {
		t.Fatalf("failed run journaled %d chunks (%v); want the chunks up to the failing one and at most one more", len(cs), err)
	}

	breakRow(t, f, 35, false)
	o.Resume = true
	res, err := f.run(t, o)
	if err != nil || res.RunID != first.RunID || res.Rows != 100 || len(res.Parts) != 10 {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	if complete, err := j.PlanComplete(ctx, first.RunID); err != nil || !complete {
		t.Fatalf("plan after the resume: complete %v, %v", complete, err)
	}
	cs, err = j.Chunks(ctx, first.RunID)
	if err != nil || len(cs) != 10 {
		t.Fatalf("chunks after the resume: %d, %v", len(cs), err)
	}
	for i, c := range cs {
		lo, hi := fmt.Sprint(i*10+1), fmt.Sprint(i*10+10)
		if c.Index != i || c.Range.Null || c.Range.Lo.String() != lo || c.Range.Hi.String() != hi || c.Status != "committed" {
			t.Errorf("chunk %d: %+v; want [%s, %s] committed", i, c, lo, hi)
		}
	}
	if v := f.validate(t, true); !v.Certified || v.Rows != 100 {
		t.Fatalf("after resume: %+v", v)
	}
}

// TestPlanCompleteMarks: a plan begun is whole only once ended; a run journaled before plans
// were incremental (chunks, no plan row) was planned whole.
func TestPlanCompleteMarks(t *testing.T) {
	ctx := context.Background()
	j, err := OpenJournal(ctx, t.TempDir()+"/state.db")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	check := func(run string, want bool) {
		t.Helper()
		if got, err := j.PlanComplete(ctx, run); err != nil || got != want {
			t.Fatalf("PlanComplete(%s) = %v, %v; want %v", run, got, err, want)
		}
	}
	check("none", false)
	must(t, j.AddChunk(ctx, "legacy", 0, Range{Lo: dataset.IntBound(1), Hi: dataset.IntBound(5)}))
	check("legacy", true)
	must(t, j.BeginPlan(ctx, "new"))
	check("new", false)
	must(t, j.AddChunk(ctx, "new", 0, Range{Lo: dataset.IntBound(1), Hi: dataset.IntBound(5)}))
	check("new", false)
	must(t, j.BeginPlan(ctx, "new")) // a resume begins it again: still not whole
	check("new", false)
	must(t, j.EndPlan(ctx, "new"))
	check("new", true)
}
