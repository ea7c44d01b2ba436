package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/repair"
)

// decodeOutput decodes the --format json output of a command run by what.
func decodeOutput[T any](t *testing.T, what string, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.out), &v); err != nil {
		t.Fatalf("%s output %q (stderr %q): %v", what, r.out, r.err, err)
	}
	return v
}

func decodePlan(t *testing.T, r result) repair.Plan {
	t.Helper()
	return decodeOutput[repair.Plan](t, "repair", r)
}

func manifestAt(t *testing.T, prefix string) *dataset.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(prefix, dataset.ManifestKey))
	must(t, err)
	m, err := dataset.DecodeManifest(b)
	must(t, err)
	return m
}

// TestE2ERepairSQLite: a certified export whose source then changes in one chunk (rows
// deleted, updated, inserted) reconciles to exactly that chunk as a mismatch; repair plans it
// and writes nothing; repair --execute (from a report file) re-exports only it, beside the old
// part, marks the old part superseded, and a second reconcile matches; the parts listed are
// the source's rows once. A deleted part (unknown) is repaired too; a repair killed between
// its manifest and _SUCCESS is finished by the next; a changed definition is refused.
func TestE2ERepairSQLite(t *testing.T) {
	cfg := quickstart(t)
	dir := filepath.Dir(cfg)
	src := filepath.Join(dir, "quickstart.db")
	wharf(t, "export", "-c", cfg).must(t, 0)
	// In chunk 1 (ids 251-500): a row deleted, one updated, one deleted and inserted anew.
	execSQLite(t, src, `DELETE FROM orders WHERE id = 260`, `UPDATE orders SET note = 'changed' WHERE id = 300`,
		`DELETE FROM orders WHERE id = 270`, `INSERT INTO orders VALUES (270, 'acme', '1.00', '2024-01-05 09:00:00', 1, NULL)`)
	r := wharf(t, "reconcile", "-c", cfg, "--format", "json").must(t, 1)
	rep := decodeReconcile(t, r)
	got, _ := statuses(rep)
	if !slices.Equal(got, []string{"match", "mismatch", "match", "match"}) {
		t.Fatalf("after the source changed in chunk 1: %v", got)
	}
	reportFile := filepath.Join(dir, "report.json")
	must(t, os.WriteFile(reportFile, []byte(r.out), 0o644))

	orig := manifestAt(t, rep.Prefix)
	before := treeSnapshot(t, rep.Prefix)
	plan := decodePlan(t, wharf(t, "repair", "-c", cfg, "--format", "json").must(t, 0))
	if plan.Executed || len(plan.Chunks) != 1 || plan.Chunks[0].Chunk != 1 || plan.Chunks[0].Part != rep.Chunks[1].Part {
		t.Fatalf("the plan: %+v", plan)
	}
	if text := wharf(t, "repair", "-c", cfg).must(t, 0).out; !strings.Contains(text, "add --execute") {
		t.Errorf("the plan's text does not say how to execute it:\n%s", text)
	}
	if after := treeSnapshot(t, rep.Prefix); len(after) != len(before) {
		t.Fatalf("planning wrote: %d files before, %d after", len(before), len(after))
	}

	done := decodePlan(t, wharf(t, "repair", "-c", cfg, "--report", reportFile, "--execute", "--format", "json").must(t, 0))
	if !done.Executed || len(done.Chunks) != 1 || done.Chunks[0].NewPart == "" || done.RepairID == "" {
		t.Fatalf("the repair: %+v", done)
	}
	old, repl := filepath.Join(rep.Prefix, rep.Chunks[1].Part), filepath.Join(rep.Prefix, done.Chunks[0].NewPart)
	if b, err := os.ReadFile(old); err != nil || before[old] != string(b) {
		t.Fatalf("the replaced part was touched: %v", err)
	}
	if _, err := os.Stat(repl); err != nil {
		t.Fatalf("the new part: %v", err)
	}
	m := manifestAt(t, rep.Prefix)
	if len(m.Superseded) != 1 || m.Superseded[0].Key != rep.Chunks[1].Part || m.Superseded[0].By != done.Chunks[0].NewPart ||
		len(m.Repairs) != 1 || m.Parts[1].Key != done.Chunks[0].NewPart {
		t.Fatalf("the manifest after the repair: parts %v, superseded %+v, repairs %+v", m.Parts, m.Superseded, m.Repairs)
	}
	if orig.Consistency == nil || orig.Consistency.Mode != dataset.ConsistencySnapshot {
		t.Fatalf("the run was not read from one snapshot (%+v): the check below would prove nothing", orig.Consistency)
	}
	if c := m.Consistency; c == nil || c.Mode != dataset.ConsistencyChunk || c.Requested != dataset.ConsistencySnapshot || c.Snapshot != "" {
		t.Fatalf("a repaired snapshot run still claims one snapshot: %+v", c)
	}
	wharf(t, "validate", "-c", cfg, "--deep").must(t, 0)
	rep = decodeReconcile(t, wharf(t, "reconcile", "-c", cfg, "--format", "json").must(t, 0))
	if rep.Matched != 4 {
		t.Fatalf("a reconcile after the repair: %+v", rep)
	}
	parts := wharf(t, "parts", "-c", cfg).must(t, 0).out
	if strings.Contains(parts, filepath.Base(old)) || !strings.Contains(parts, filepath.Base(repl)) {
		t.Errorf("wharf parts lists the replaced part or not the new one:\n%s", parts)
	}
	if p := decodePlan(t, wharf(t, "repair", "-c", cfg, "--format", "json").must(t, 0)); len(p.Chunks) != 0 {
		t.Errorf("a repair of a matching run plans %+v", p.Chunks)
	}

	// A deleted part: its chunk is unknown, and a repair reads it again.
	must(t, os.Remove(filepath.Join(rep.Prefix, rep.Chunks[3].Part)))
	done = decodePlan(t, wharf(t, "repair", "-c", cfg, "--execute", "--format", "json").must(t, 0))
	if len(done.Chunks) != 1 || done.Chunks[0].Status != "unknown" || done.Chunks[0].Chunk != 3 {
		t.Fatalf("the repair of a deleted part: %+v", done)
	}
	wharf(t, "reconcile", "-c", cfg).must(t, 0)

	// A repair killed after its manifest, before its _SUCCESS: the marker is the old one.
	success := filepath.Join(rep.Prefix, dataset.SuccessKey)
	must(t, os.WriteFile(success, []byte(strings.Repeat("0", 64)+"\n"), 0o644))
	wharf(t, "validate", "-c", cfg).must(t, 1)
	p := decodePlan(t, wharf(t, "repair", "-c", cfg, "--format", "json").must(t, 0))
	if p.Executed || !strings.Contains(p.Note, "interrupted") {
		t.Fatalf("the plan for an interrupted repair: %+v", p)
	}
	p = decodePlan(t, wharf(t, "repair", "-c", cfg, "--execute", "--format", "json").must(t, 0))
	if !p.Executed || !strings.Contains(p.Note, "written now") {
		t.Fatalf("finishing an interrupted repair: %+v", p)
	}
	wharf(t, "validate", "-c", cfg, "--deep").must(t, 0)

	// Another definition: refused, nothing written.
	b, err := os.ReadFile(cfg)
	must(t, err)
	must(t, os.WriteFile(cfg, []byte(strings.Replace(string(b), "chunk_rows: 250", "chunk_rows: 250\n    invalid_utf8: binary", 1)), 0o644))
	execSQLite(t, src, `UPDATE orders SET note = 'again' WHERE id = 10`)
	before = treeSnapshot(t, rep.Prefix)
	r = wharf(t, "repair", "-c", cfg, "--execute")
	if r.code != 1 || !strings.Contains(r.err, "WHARF_RECONCILE_REFUSED") || !strings.Contains(r.err, "definition") {
		t.Fatalf("a repair after the definition changed: exit %d, %s", r.code, r.err)
	}
	if after := treeSnapshot(t, rep.Prefix); len(after) != len(before) {
		t.Fatal("a refused repair wrote")
	}
}

// TestE2ERepairCrash SIGKILLs `wharf repair --execute` while it writes its new parts, and
// between its manifest and its _SUCCESS (pausing there, WHARF_TEST_EXPORT_PAUSE). After a kill
// during the parts the prefix is still the run as it was, certified; after one between the
// manifest and the marker it is not certified, and its only problem is the marker. Either way
// the next repair --execute finishes, and the run then reconciles with its source.
func TestE2ERepairCrash(t *testing.T) {
	for _, phase := range []string{"parts", "manifest"} {
		t.Run(phase, func(t *testing.T) {
			cfg := quickstart(t)
			src := filepath.Join(filepath.Dir(cfg), "quickstart.db")
			run := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json").must(t, 0))
			execSQLite(t, src, `DELETE FROM orders WHERE id IN (10, 600)`)
			rep := decodeReconcile(t, wharf(t, "reconcile", "-c", cfg, "--format", "json").must(t, 1))
			if rep.Mismatched != 2 {
				t.Fatalf("want two chunks to repair: %+v", rep)
			}
			cmd := cli{env: []string{envTestPause + "=after-part:500ms,after-manifest:2s"}}.command("repair", "-c", cfg, "--execute")
			must(t, cmd.Start())
			deadline := time.Now().Add(20 * time.Second)
			for landed := false; !landed; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the %s phase never came", phase)
				}
				switch phase {
				case "parts": // a new part is there, not yet the manifest that lists it
					names, _ := filepath.Glob(filepath.Join(rep.Prefix, "part-*"))
					landed = len(names) > len(run.Parts)
				case "manifest":
					b, _ := os.ReadFile(filepath.Join(rep.Prefix, dataset.ManifestKey))
					landed = strings.Contains(string(b), `"repairs"`)
				}
			}
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			v := decodeValidation(t, wharf(t, "validate", "-c", cfg, "--format", "json"))
			m := manifestAt(t, rep.Prefix)
			switch phase {
			case "parts":
				if !v.Certified || len(m.Repairs) != 0 {
					t.Fatalf("killed during the new parts: certified %v, repairs %+v, problems %+v", v.Certified, m.Repairs, v.Problems)
				}
			case "manifest":
				if v.Certified || len(v.Problems) != 1 || v.Problems[0].Code != dataset.ProblemSuccessMismatch || len(m.Repairs) != 1 {
					t.Fatalf("killed between the manifest and _SUCCESS: certified %v, problems %+v", v.Certified, v.Problems)
				}
			}
			wharf(t, "repair", "-c", cfg, "--execute").must(t, 0)
			wharf(t, "validate", "-c", cfg, "--deep").must(t, 0)
			wharf(t, "reconcile", "-c", cfg).must(t, 0)
		})
	}
}

// TestE2ERepairNeverWritesOverAnotherManifest: a manifest.json written while a repair runs
// (here rewritten with its own bytes, as a concurrent writer would leave a new version) is
// not written over: the repair is refused, and the prefix stays certified as it was.
func TestE2ERepairNeverWritesOverAnotherManifest(t *testing.T) {
	cfg := quickstart(t)
	src := filepath.Join(filepath.Dir(cfg), "quickstart.db")
	wharf(t, "export", "-c", cfg).must(t, 0)
	execSQLite(t, src, `DELETE FROM orders WHERE id = 10`)
	rep := decodeReconcile(t, wharf(t, "reconcile", "-c", cfg, "--format", "json").must(t, 1))
	manifest := filepath.Join(rep.Prefix, dataset.ManifestKey)
	b, err := os.ReadFile(manifest)
	must(t, err)
	cmd := cli{env: []string{envTestPause + "=after-part:1500ms"}}.command("repair", "-c", cfg, "--execute")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if names, _ := filepath.Glob(filepath.Join(rep.Prefix, "part-*")); len(names) > len(rep.Chunks) {
			break // the new part is written: the repair sleeps before its manifest
		}
		if time.Now().After(deadline) {
			t.Fatal("the repair never wrote its part")
		}
	}
	time.Sleep(20 * time.Millisecond) // another mtime: another ETag
	tmp := manifest + ".other"
	must(t, os.WriteFile(tmp, b, 0o644))
	must(t, os.Rename(tmp, manifest))
	err = cmd.Wait()
	if err == nil || !strings.Contains(stderr.String(), "WHARF_REPAIR_REFUSED") || !strings.Contains(stderr.String(), "changed while the repair ran") {
		t.Fatalf("a repair whose manifest changed under it: %v, %s", err, stderr.String())
	}
	if after, _ := os.ReadFile(manifest); string(after) != string(b) {
		t.Fatal("the repair wrote over the other manifest")
	}
	wharf(t, "validate", "-c", cfg).must(t, 0)
}

// logIfFailed logs what p printed when t failed.
func logIfFailed(t *testing.T, what string, p *proc) {
	if t.Failed() {
		t.Logf("%s printed:\n%s\n%s", what, p.out.String(), p.err.String())
	}
}

// TestE2ERepairUnderBucketState: a run journaled in its export's commit log is repaired under
// the export's writer lease (an export on another node meanwhile is refused, exit 75), and its
// new manifest is certified by a log entry of its own: validate, which checks that entry,
// certifies it, a reconcile matches, `wharf runs` shows the new rows, and the lease is released
// for the next holder.
func TestE2ERepairUnderBucketState(t *testing.T) {
	x := newLeasedExport(t)
	a := x.machine("host-a", 0)
	if code := start(t, a("export")).wait(); code != 0 {
		t.Fatalf("export: exit %d", code)
	}
	execSQLite(t, x.src, `DELETE FROM orders WHERE id = 10`)
	if p := start(t, a("reconcile")); p.wait() != 1 {
		t.Fatalf("reconcile after a delete: %s", p.out.String())
	}
	before := readManifest(t, x.s, "orders/")
	rp := start(t, x.machine("host-a", 0, envTestPause+"=after-part:2s")("repair", "--execute", "--format", "json"))
	t.Cleanup(func() { logIfFailed(t, "repair", rp) })
	pollUntil(t, 20*time.Second, "the repair's new part", func() bool {
		objs, err := x.s.ListAll(context.Background(), "orders/part-")
		return err == nil && len(objs) > len(before.Parts)
	})
	b := start(t, x.machine("host-b", 0)("export"))
	if code := b.wait(); code != errcode.ExitHeld || !strings.Contains(b.err.String(), "held by node host-a") {
		t.Fatalf("an export while the repair holds the lease: exit %d, %s", code, b.err.String())
	}
	if code := rp.wait(); code != 0 {
		t.Fatalf("repair: exit %d\n%s", code, rp.err.String())
	}
	x.validate().must(t, 0)
	m := readManifest(t, x.s, "orders/")
	if m.Log == nil || before.Log == nil || m.Log.Seq <= before.Log.Seq || len(m.Repairs) != 1 || len(m.Superseded) != 1 || m.Rows != before.Rows-1 {
		t.Fatalf("the repaired manifest: log %+v (was %+v), repairs %+v, %d superseded, %d rows (was %d)", m.Log, before.Log, m.Repairs, len(m.Superseded), m.Rows, before.Rows)
	}
	if p := start(t, a("reconcile")); p.wait() != 0 {
		t.Fatalf("reconcile after the repair: %s", p.out.String())
	}
	out, err := x.machine("host-c", 0)("runs", "--format", "json").Output()
	must(t, err)
	if !strings.Contains(string(out), fmt.Sprintf(`"rows":%d,`, m.Rows)) {
		t.Errorf("runs after the repair, want %d rows: %s", m.Rows, out)
	}
	// Released: another node takes the lease at once, and finds nothing to repair.
	if p := start(t, x.machine("host-b", 0)("repair", "--execute")); p.wait() != 0 {
		t.Fatalf("a second repair from another node: %s", p.err.String())
	}
	if after := readManifest(t, x.s, "orders/"); after.Log.Seq != m.Log.Seq {
		t.Errorf("a repair with nothing to do committed to the log: seq %d, was %d", after.Log.Seq, m.Log.Seq)
	}
}

// TestE2ERepairUnderBucketStateCrash SIGKILLs a repair under state: bucket after its log entry
// and before its manifest, and between its manifest and _SUCCESS. After the first the prefix
// is the run as it was, still certified; after the second it is not certified. Either way a
// repair from another node (once the killed one's lease expires) settles the log and ends
// with a certified prefix that reconciles.
func TestE2ERepairUnderBucketStateCrash(t *testing.T) {
	for _, phase := range []string{"entry", "manifest"} {
		t.Run(phase, func(t *testing.T) {
			x := newLeasedExport(t)
			a := x.machine("host-a", 0)
			if code := start(t, a("export")).wait(); code != 0 {
				t.Fatalf("export: exit %d", code)
			}
			execSQLite(t, x.src, `DELETE FROM orders WHERE id IN (10, 600)`)
			before := readManifest(t, x.s, "orders/")
			pause := map[string]string{"entry": "before-manifest:10s", "manifest": "after-manifest:10s"}[phase]
			rp := start(t, x.machine("host-a", 0, envTestPause+"="+pause)("repair", "--execute"))
			t.Cleanup(func() { logIfFailed(t, "repair", rp) })
			pollUntil(t, 20*time.Second, "the "+phase+" phase", func() bool {
				if phase == "entry" { // the log's head certifies the repair's manifest
					e, err := lease.OpenLog(x.s.Sub("orders"), "orders").Head(context.Background(), export.LogKind)
					return err == nil && e != nil && strings.Contains(string(e.Data), `"replaces_sha256"`)
				}
				b, _, err := dataset.ReadSmall(context.Background(), x.s.Sub("orders"), dataset.ManifestKey)
				return err == nil && strings.Contains(string(b), `"repairs"`)
			})
			_ = rp.cmd.Process.Kill()
			rp.wait()
			switch phase {
			case "entry":
				x.validate().must(t, 0)
				if m := readManifest(t, x.s, "orders/"); len(m.Repairs) != 0 {
					t.Fatalf("killed before its manifest, a repair is recorded: %+v", m.Repairs)
				}
			case "manifest":
				x.validate().must(t, 1)
			}
			if p := start(t, x.machine("host-b", 10*time.Second)("repair", "--execute")); p.wait() != 0 {
				t.Fatalf("the repair after the kill: %s", p.err.String())
			}
			x.validate().must(t, 0)
			if m := readManifest(t, x.s, "orders/"); len(m.Repairs) != 1 || m.Rows != before.Rows-2 {
				t.Fatalf("after the second repair: repairs %+v, %d rows (was %d)", m.Repairs, m.Rows, before.Rows)
			}
			if p := start(t, a("reconcile")); p.wait() != 0 {
				t.Fatalf("reconcile after the repair: %s", p.out.String())
			}
		})
	}
}
