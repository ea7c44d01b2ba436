package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store"
)

// With state: bucket a run's certificate is committed to the export's log before its
// manifest and _SUCCESS are written, so that a holder fenced past never writes them. A
// process killed between the two must not leave a journal that says the run succeeded — a
// delta cursor advanced past a window that no certified prefix holds — nor a certified run
// without its _SUCCESS: the next run settles it by reading the prefix.

// deltaLeasedExport writes a delta export of the demo table by id, with state: bucket, one
// prefix per run (lease TTL 3 s, waiting 10 s for a held one), and returns the cli that runs
// wharf with it and its args.
func deltaLeasedExport(x *leasedExport) (cli, []string) {
	dir := x.t.TempDir()
	writeFiles(x.t, dir, map[string]string{"wharf.yaml": x.config(10*time.Second, "    mode: delta\n    cursor_column: id\n", "orders/{run_id}/")})
	return cli{dir: dir, env: []string{"WHARF_NODE_ID=host-a"}}, []string{"-c", "wharf.yaml"}
}

// otherHost is c run as another machine: the next run after a kill, on host-b.
func otherHost(c cli) cli {
	c.env = []string{"WHARF_NODE_ID=host-b"}
	return c
}

// headCertifies reports whether the head of the export's log certifies a run.
func (x *leasedExport) headCertifies() bool {
	e, err := lease.OpenLog(x.s.Sub("orders"), "orders").Head(context.Background(), export.LogKind)
	if err != nil || e == nil {
		return false
	}
	var st struct {
		Certifies *export.Certificate `json:"certifies"`
	}
	return json.Unmarshal(e.Data, &st) == nil && st.Certifies != nil
}

// killWhen starts wharf export with the pause, waits for cond and SIGKILLs it.
func killWhen(t *testing.T, c cli, cfg []string, pause string, cond func() bool) {
	t.Helper()
	c.env = append(slices.Clip(c.env), envTestPause+"="+pause)
	p := start(t, c.command(append(cfg, "export")...))
	pollUntil(t, 30*time.Second, "the point to kill at", cond)
	must(t, p.cmd.Process.Kill())
	if code := p.wait(); code != -1 {
		t.Fatalf("the export ended (exit %d) before it was killed\n%s", code, p.err.String())
	}
}

// runsOf reads `wharf runs --format json`, newest first.
func runsOf(t *testing.T, c cli, cfg []string) []export.RunRecord {
	t.Helper()
	r := c.run(t, append(cfg, "runs", "--format", "json")...).must(t, 0)
	var out []export.RunRecord
	sc := bufio.NewScanner(strings.NewReader(r.out))
	for sc.Scan() {
		var rec export.RunRecord
		must(t, json.Unmarshal(sc.Bytes(), &rec))
		out = append(out, rec)
	}
	return out
}

func addOrders(t *testing.T, src string, n int) {
	t.Helper()
	db, err := sql.Open("sqlite", src)
	must(t, err)
	defer db.Close()
	for i := range n {
		_, err := db.Exec(`INSERT INTO orders (id, customer, amount, placed_at, shipped, note) VALUES (?, 'late', 1.00, '2026-12-01 00:00:00', 0, NULL)`, crashRows+1+i)
		must(t, err)
	}
}

// certifiedRows validates prefix and returns its rows, or -1 when it is not certified.
func (x *leasedExport) certifiedRows(prefix string) int64 {
	c, ep := minioCLI(x.t)
	r := c.run(x.t, append(ep, "validate", "--format", "json", prefix)...)
	var v dataset.Validation
	if json.Unmarshal([]byte(r.out), &v) != nil || !v.Certified || r.code != 0 {
		return -1
	}
	return v.Rows
}

// TestE2EExportKilledBetweenCertificateAndManifest: the next run finds the killed run's
// prefix without a manifest, journals that run failed and exports its window again; across
// the certified prefixes every row is there once.
func TestE2EExportKilledBetweenCertificateAndManifest(t *testing.T) {
	x := newLeasedExport(t)
	c, cfg := deltaLeasedExport(x)
	killWhen(t, c, cfg, "before-manifest:30s", x.headCertifies)
	runs := runsOf(t, c, cfg)
	killed := runs[0]
	if _, err := x.s.Head(context.Background(), strings.TrimPrefix(killed.Prefix, "s3://"+x.bucket+"/")+dataset.ManifestKey); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("the kill landed after the manifest was written (%v): the test aims before it", err)
	}
	addOrders(t, x.src, 10)
	next := decodeRun(t, otherHost(c).run(t, append(cfg, "export", "--format", "json")...).must(t, 0))
	runs = runsOf(t, c, cfg)
	var after *export.RunRecord
	for i := range runs {
		if runs[i].RunID == killed.RunID {
			after = &runs[i]
		}
	}
	if after == nil || after.Status != dataset.StatusFailed || !strings.Contains(after.Error, "--resume") {
		t.Errorf("the killed run is journaled %+v, want failed, saying its manifest was never written", after)
	}
	if got := x.certifiedRows(killed.Prefix); got != -1 {
		t.Errorf("the killed run's prefix validates certified (%d rows)", got)
	}
	if got := x.certifiedRows(next.Prefix); got != crashRows+10 {
		t.Errorf("the next run certified %d rows, want %d: the killed run's window again, and the new rows", got, crashRows+10)
	}
}

// TestE2EExportKilledBetweenManifestAndSuccess: the next run finds the certified manifest
// without its _SUCCESS and writes it; the killed run is certified, as its journal says, and
// the next run's window starts where the killed run's ended.
func TestE2EExportKilledBetweenManifestAndSuccess(t *testing.T) {
	x := newLeasedExport(t)
	c, cfg := deltaLeasedExport(x)
	killWhen(t, c, cfg, "after-manifest:30s", func() bool {
		objs, err := x.s.ListAll(context.Background(), "orders/")
		return err == nil && slices.ContainsFunc(objs, func(o store.ObjectInfo) bool { return strings.HasSuffix(o.Key, "/"+dataset.ManifestKey) })
	})
	killed := runsOf(t, c, cfg)[0]
	if got := x.certifiedRows(killed.Prefix); got != -1 {
		t.Fatalf("the killed run's prefix validates certified (%d rows) before _SUCCESS is written: the test aims between them", got)
	}
	addOrders(t, x.src, 10)
	next := decodeRun(t, otherHost(c).run(t, append(cfg, "export", "--format", "json")...).must(t, 0))
	if got := x.certifiedRows(killed.Prefix); got != crashRows {
		t.Errorf("the killed run, journaled succeeded, certifies %d rows at its prefix, want %d", got, crashRows)
	}
	if got := x.certifiedRows(next.Prefix); got != 10 {
		t.Errorf("the next run certified %d rows, want the 10 added after the killed run", got)
	}
	for _, r := range runsOf(t, c, cfg) {
		if r.RunID == killed.RunID && r.Status != dataset.StatusSucceeded {
			t.Errorf("the killed run is journaled %s (%s), want succeeded", r.Status, r.Error)
		}
	}
}

// TestE2EExportResumeFinishesARunKilledBeforeItsManifest: --resume after the same kill
// finishes the killed run at its own prefix, from the parts it wrote.
func TestE2EExportResumeFinishesARunKilledBeforeItsManifest(t *testing.T) {
	x := newLeasedExport(t)
	c, cfg := deltaLeasedExport(x)
	killWhen(t, c, cfg, "before-manifest:30s", x.headCertifies)
	killed := runsOf(t, c, cfg)[0]
	res := decodeRun(t, otherHost(c).run(t, append(cfg, "export", "--resume", "--format", "json")...).must(t, 0))
	if res.RunID != killed.RunID {
		t.Fatalf("--resume ran %s, want the killed run %s", res.RunID, killed.RunID)
	}
	if got := x.certifiedRows(killed.Prefix); got != crashRows {
		t.Errorf("the resumed run certifies %d rows, want %d", got, crashRows)
	}
}

// TestE2EExportLateManifestOfARevokedRunIsNotCertified: a holder stopped (SIGSTOP) between
// its certificate and its manifest is taken over; the next holder journals the run failed and
// exports its window again. When the stopped holder is continued, its manifest put lands at
// its prefix — a fence guards the log, not the puts in flight — and validate must not certify
// it: the log revoked the run after certifying it, so the window is certified once.
func TestE2EExportLateManifestOfARevokedRunIsNotCertified(t *testing.T) {
	x := newLeasedExport(t)
	c, cfg := deltaLeasedExport(x)
	c.env = append(slices.Clip(c.env), envTestPause+"=before-manifest:3s")
	a := start(t, c.command(append(cfg, "export")...))
	pollUntil(t, 30*time.Second, "the certificate in the log", x.headCertifies)
	must(t, a.cmd.Process.Signal(syscall.SIGSTOP))
	stopped := runsOf(t, c, cfg)[0]
	next := decodeRun(t, otherHost(c).run(t, append(cfg, "export", "--format", "json")...).must(t, 0))
	must(t, a.cmd.Process.Signal(syscall.SIGCONT))
	a.wait()
	key := strings.TrimPrefix(stopped.Prefix, "s3://"+x.bucket+"/") + dataset.ManifestKey
	if _, err := x.s.Head(context.Background(), key); err != nil {
		t.Fatalf("the continued holder's manifest did not land (%v): the test needs its late put", err)
	}
	if got := x.certifiedRows(stopped.Prefix); got != -1 {
		t.Errorf("the late manifest of the revoked run validates certified (%d rows): its window is certified twice", got)
	}
	if got := x.certifiedRows(next.Prefix); got != crashRows {
		t.Errorf("the next run certified %d rows, want %d", got, crashRows)
	}
}

// TestE2EExportKilledAfterItsCertificateWithAStateFile: with the local state file, a run is
// journaled succeeded after its manifest and _SUCCESS are written; a process killed between
// the two leaves a certified prefix that the journal calls running. The next run must find
// that certificate and journal the run succeeded (advancing the delta cursor past its window)
// rather than abandon it and export the window again: the window certified twice.
func TestE2EExportKilledAfterItsCertificateWithAStateFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "demo.db")
	must(t, export.CreateDemo(context.Background(), src, crashRows))
	writeFiles(t, dir, map[string]string{"wharf.yaml": fmt.Sprintf(`exports:
  - name: orders
    source: sqlite://%s
    table: orders
    chunk_key: id
    chunk_rows: %d
    mode: delta
    cursor_column: id
    destination: ./out/{run_id}/
`, src, crashRows/4)})
	c, cfg := cli{dir: dir}, []string{"-c", "wharf.yaml"}
	killWhen(t, c, cfg, "after-success:30s", func() bool {
		found, _ := filepath.Glob(filepath.Join(dir, "out", "*", dataset.SuccessKey))
		return len(found) > 0
	})
	killed := runsOf(t, c, cfg)[0]
	if killed.Status != export.StatusRunning {
		t.Fatalf("the killed run is journaled %s: the test aims between _SUCCESS and the journal", killed.Status)
	}
	addOrders(t, src, 10)
	next := decodeRun(t, c.run(t, append(cfg, "export", "--format", "json")...).must(t, 0))
	if next.Rows != 10 {
		t.Errorf("the next run exported %d rows, want the 10 added: the killed run's window is certified already", next.Rows)
	}
	for _, r := range runsOf(t, c, cfg) {
		if r.RunID == killed.RunID && (r.Status != export.StatusSucceeded || r.Rows != crashRows) {
			t.Errorf("the killed run is journaled %s with %d rows, want succeeded with %d", r.Status, r.Rows, crashRows)
		}
	}
}
