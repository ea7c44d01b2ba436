package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A backfill's --to that holds another dataset's manifest — a job's over another source, or
// an export's — is refused before anything is read, and is never written over: that dataset
// stays certified, and its job's status stays true. The job itself may finish there again,
// and a replay of its source under another job name may too (TestE2EBackfillQuarantines…).
func TestE2EBackfillRefusesADestinationHoldingAnotherDataset(t *testing.T) {
	dir := t.TempDir()
	wharf(t, "mb", dir).must(t, 0)
	writeBfObjects(t, filepath.Join(dir, "in-a"), 3, 4)
	writeBfObjects(t, filepath.Join(dir, "in-b"), 2, 4)
	out := dir + "/out/"
	wharf(t, backfillArgs(dir+"/in-a/", out)...).must(t, 0)
	before := readFile(t, filepath.Join(dir, "out", "manifest.json"))

	r := wharf(t, backfillArgs(dir+"/in-b/", out)...)
	if r.code != 2 || !strings.Contains(r.err, "WHARF_BACKFILL_JOB_MISMATCH") || !strings.Contains(r.err, "holds the manifest of backfill:") {
		t.Errorf("a second job into the first's destination: exit %d, %s; want exit 2 naming the manifest there", r.code, r.err)
	}
	if after := readFile(t, filepath.Join(dir, "out", "manifest.json")); after != before {
		t.Errorf("the first job's manifest was replaced")
	}
	wharf(t, "validate", out).must(t, 0)

	// An export's prefix is another dataset too.
	cfg := quickstart(t)
	run := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json").must(t, 0))
	r = wharf(t, backfillArgs(dir+"/in-b/", run.Prefix)...)
	if r.code != 2 || !strings.Contains(r.err, "WHARF_BACKFILL_JOB_MISMATCH") {
		t.Errorf("a backfill into an export's prefix: exit %d, %s; want exit 2", r.code, r.err)
	}

	// The first job, planned again, finishes at its own destination.
	wharf(t, backfillArgs(dir+"/in-a/", out, "--replan")...).must(t, 0)
}
