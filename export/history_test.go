package export

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
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

// A verification recorded for a run comes back with it from Runs and LastRun, the later one
// replacing the earlier; a run the journal does not hold, a history with no state file (which
// is not made) and bucket state record nothing.
func TestHistoryRecordsVerifications(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 30, 10)
	h := History{StatePath: f.state, Exports: []Export{f.exp}}
	v := Verification{At: time.Date(2026, 12, 3, 17, 2, 0, 0, time.UTC), By: VerifiedByReconcile, Result: "match",
		Detail: "3 chunks: 3 match, 0 mismatch, 0 unknown"}
	if ok, err := h.RecordVerification(ctx, &f.exp, "r1", v); ok || err != nil {
		t.Fatalf("with no state file: recorded %v, %v", ok, err)
	}
	if _, err := os.Stat(f.state); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("recording a verification made the state file: %v", err)
	}
	first, second := f.mustRun(t), f.mustRun(t)
	if ok, err := h.RecordVerification(ctx, &f.exp, first.RunID, v); !ok || err != nil {
		t.Fatalf("record: %v, %v", ok, err)
	}
	later := Verification{At: v.At.Add(time.Hour), By: VerifiedByValidateDeep, Result: "certified", Detail: "3 parts, 30 rows"}
	if ok, err := h.RecordVerification(ctx, &f.exp, first.RunID, later); !ok || err != nil {
		t.Fatalf("record again: %v, %v", ok, err)
	}
	other := f.exp
	other.Name = "other"
	if ok, err := h.RecordVerification(ctx, &other, second.RunID, v); ok || err != nil {
		t.Fatalf("a run of another export: recorded %v, %v", ok, err)
	}
	runs, err := h.Runs(ctx, "", 0)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs: %+v, %v", runs, err)
	}
	if runs[0].RunID != second.RunID || runs[0].Verification != nil {
		t.Errorf("the run never verified: %+v", runs[0])
	}
	if runs[1].RunID != first.RunID || runs[1].Verification == nil || *runs[1].Verification != later {
		t.Errorf("the run verified twice: %+v, want %+v", runs[1].Verification, later)
	}
	b, err := json.Marshal(runs[1])
	if err != nil || !strings.Contains(string(b), `"verified_at":"2026-12-03T18:02:00Z","verified_by":"validate --deep","verified_result":"certified"`) {
		t.Errorf("JSON of a verified run: %s, %v", b, err)
	}
	if b, _ := json.Marshal(runs[0]); strings.Contains(string(b), "verified") {
		t.Errorf("JSON of a run never verified: %s", b)
	}

	hb := History{StatePath: StateBucket, Exports: []Export{f.exp}}
	if ok, err := hb.RecordVerification(ctx, &f.exp, first.RunID, v); ok || err != nil {
		t.Errorf("bucket state: recorded %v, %v", ok, err)
	}
}

// A state file written before verifications were journaled (no verifications table) opens,
// its runs read back unverified, and a verification can then be recorded in it.
func TestJournalMigratesToVerifications(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 20, 10)
	res := f.mustRun(t)
	old := openDB(t, f.state)
	if _, err := old.ExecContext(ctx, `DROP TABLE verifications`); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(old.Close())
	j, err := OpenJournal(ctx, f.state)
	must(err)
	defer j.Close()
	last, err := j.LastRun(ctx, f.exp.Name)
	if err != nil || last == nil || last.RunID != res.RunID || last.Verification != nil || last.Status != StatusSucceeded {
		t.Fatalf("the old file's run: %+v, %v", last, err)
	}
	v := Verification{At: time.Now().UTC().Truncate(time.Second), By: VerifiedByValidate, Result: "certified", Detail: "2 parts, 20 rows"}
	ok, err := j.RecordVerification(ctx, f.exp.Name, res.RunID, v)
	must(err)
	if !ok {
		t.Fatal("the old file's run was not recorded as verified")
	}
	last, err = j.LastRun(ctx, f.exp.Name)
	if err != nil || last.Verification == nil || *last.Verification != v {
		t.Fatalf("after recording: %+v, %v; want %+v", last, err, v)
	}
}

// A resume of a run (StartRun again) forgets the run's last verification: it was of the
// output the resume changes.
func TestJournalResumeForgetsVerification(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 20, 10)
	res := f.mustRun(t)
	j, err := OpenJournal(ctx, f.state)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	v := Verification{At: time.Now().UTC(), By: VerifiedByReconcile, Result: "mismatch", Detail: "2 chunks: 1 match, 1 mismatch, 0 unknown"}
	if ok, err := j.RecordVerification(ctx, f.exp.Name, res.RunID, v); !ok || err != nil {
		t.Fatalf("record: %v, %v", ok, err)
	}
	last, err := j.LastRun(ctx, f.exp.Name)
	if err != nil || last.Verification == nil {
		t.Fatalf("before the resume: %+v, %v", last, err)
	}
	if err := j.StartRun(ctx, last); err != nil {
		t.Fatal(err)
	}
	again, err := j.LastRun(ctx, f.exp.Name)
	if err != nil || again.RunID != res.RunID || again.Attempts != last.Attempts+1 || again.Verification != nil {
		t.Fatalf("after the resume started: %+v, %v; want attempt %d, no verification", again, err, last.Attempts+1)
	}
}
