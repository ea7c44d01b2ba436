package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/export"
)

// runRecord is the run runID of `wharf runs --format json`.
func runRecord(t *testing.T, cfg, runID string) export.RunRecord {
	t.Helper()
	for _, r := range runRecords(t, cfg) {
		if r.RunID == runID {
			return r
		}
	}
	t.Fatalf("wharf runs has no run %s", runID)
	return export.RunRecord{}
}

// wantVerified fails unless rec's last verification is by, result and detail, made between
// from and now.
func wantVerified(t *testing.T, rec export.RunRecord, from time.Time, by, result, detail string) {
	t.Helper()
	v := rec.Verification
	if v == nil {
		t.Fatalf("run %s: no verification recorded, want %s: %s", rec.RunID, by, result)
	}
	if v.By != by || v.Result != result || v.Detail != detail {
		t.Errorf("run %s verified %q %q %q, want %q %q %q", rec.RunID, v.By, v.Result, v.Detail, by, result, detail)
	}
	if v.At.Before(from.Truncate(time.Second)) || v.At.After(time.Now()) || v.At.Location() != time.UTC {
		t.Errorf("run %s verified at %v, want UTC between %v and now", rec.RunID, v.At, from)
	}
}

// TestE2EReconcileJournaled: a reconcile records its verdict as the run's last verification,
// which `wharf runs` shows in its table and in --format json: match after the export, then
// mismatch once the source changed; a validation (--deep) made later replaces it, and so
// does the validation of export --validate for its run. A run never verified shows none, and
// the JSON of a run carries the verified_ keys only once verified.
func TestE2EReconcileJournaled(t *testing.T) {
	cfg := quickstart(t, "validate: true", "validate: false")
	src := filepath.Join(filepath.Dir(cfg), "quickstart.db")
	first := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json").must(t, 0))
	if v := runRecord(t, cfg, first.RunID).Verification; v != nil {
		t.Fatalf("a run never verified: %+v", v)
	}
	if table := wharf(t, "runs", "-c", cfg).must(t, 0).out; !strings.Contains(table, "VERIFIED (UTC)") {
		t.Errorf("runs table lacks its VERIFIED column:\n%s", table)
	}
	if out := wharf(t, "runs", "-c", cfg, "--format", "json").must(t, 0).out; strings.Contains(out, "verified") {
		t.Errorf("the JSON of a run never verified names a verification: %s", out)
	}

	from := time.Now()
	rep := decodeReconcile(t, wharf(t, "reconcile", "-c", cfg, "--format", "json").must(t, 0))
	if rep.RunID != first.RunID {
		t.Fatalf("reconciled run %s, want %s", rep.RunID, first.RunID)
	}
	wantVerified(t, runRecord(t, cfg, rep.RunID), from, "reconcile", "match", "4 chunks: 4 match, 0 mismatch, 0 unknown")
	table := wharf(t, "runs", "-c", cfg).must(t, 0).out
	if !strings.Contains(table, " reconcile: match") {
		t.Errorf("runs table lacks the verification:\n%s", table)
	}

	execSQLite(t, src, `DELETE FROM orders WHERE id = 1`)
	from = time.Now()
	wharf(t, "reconcile", "-c", cfg).must(t, 1)
	wantVerified(t, runRecord(t, cfg, rep.RunID), from, "reconcile", "mismatch", "4 chunks: 3 match, 1 mismatch, 0 unknown")
	if table := wharf(t, "runs", "-c", cfg).must(t, 0).out; !strings.Contains(table, " reconcile: mismatch") {
		t.Errorf("runs table lacks the mismatch:\n%s", table)
	}

	from = time.Now()
	wharf(t, "validate", "-c", cfg, "--deep").must(t, 0)
	wantVerified(t, runRecord(t, cfg, rep.RunID), from, "validate --deep", "certified", "4 parts, 1000 rows")

	// A second run is verified by export --validate; the first keeps its own verification.
	second := decodeRun(t, wharf(t, "export", "-c", cfg, "--validate", "--format", "json").must(t, 0))
	wantVerified(t, runRecord(t, cfg, second.RunID), from, "validate", "certified",
		"4 parts, 999 rows")
	wantVerified(t, runRecord(t, cfg, first.RunID), from, "validate --deep", "certified", "4 parts, 1000 rows")

	// A part of the second run deleted: validate records it not certified, reconcile unknown.
	must(t, os.Remove(filepath.Join(second.Prefix, second.Parts[3].Key)))
	wharf(t, "validate", "-c", cfg).must(t, 1)
	wantVerified(t, runRecord(t, cfg, second.RunID), from, "validate", "not_certified", "1 problem(s): part_missing")
	wharf(t, "reconcile", "-c", cfg).must(t, 1)
	wantVerified(t, runRecord(t, cfg, second.RunID), from, "reconcile", "unknown", "4 chunks: 3 match, 0 mismatch, 1 unknown")
}

// TestE2EReconcileBucketStateRecordsNothing: under state: bucket a reconcile and a
// validation succeed and record nothing: no state file is made, and `wharf runs` (which reads
// the commit log) shows the run unverified.
func TestE2EReconcileBucketStateRecordsNothing(t *testing.T) {
	x := newLeasedExport(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"wharf.yaml": x.config(0, "", "orders/")})
	c := cli{dir: dir, env: []string{"WHARF_NODE_ID=host-a"}}
	c.run(t, "-c", "wharf.yaml", "export").must(t, 0)
	c.run(t, "-c", "wharf.yaml", "reconcile").must(t, 0)
	c.run(t, "-c", "wharf.yaml", "validate", "--deep").must(t, 0)
	out := c.run(t, "-c", "wharf.yaml", "runs", "--format", "json").must(t, 0).out
	if !strings.Contains(out, `"status":"succeeded"`) || strings.Contains(out, "verified") {
		t.Errorf("runs under state: bucket: %s; want the succeeded run, unverified", out)
	}
	if table := c.run(t, "-c", "wharf.yaml", "runs").must(t, 0).out; !strings.Contains(table, "VERIFIED (UTC)") || strings.Contains(table, "reconcile:") {
		t.Errorf("runs table under state: bucket:\n%s", table)
	}
	if _, err := os.Stat(filepath.Join(dir, ".wharf")); !os.IsNotExist(err) {
		t.Errorf("a state directory was made under state: bucket: %v", err)
	}
}
