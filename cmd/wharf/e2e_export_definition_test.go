package main

import (
	"database/sql"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
)

// defRows is how many rows each table of defSource holds, in chunks of defRows/10.
const defRows = 1000

// defSource creates a SQLite database with two tables of one schema: orders (id 1..defRows,
// rev defRows..1, at as Unix seconds) and archive (ids past defRows).
func defSource(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.db")
	db, err := sql.Open("sqlite", "file:"+path)
	must(t, err)
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE orders (id INTEGER PRIMARY KEY, rev INTEGER NOT NULL, at TIMESTAMP NOT NULL)`,
		`CREATE TABLE archive (id INTEGER PRIMARY KEY, rev INTEGER NOT NULL, at TIMESTAMP NOT NULL)`,
		fmt.Sprintf(`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < %d)
INSERT INTO orders SELECT i, %d - i, 1700000000 + i FROM g`, defRows, defRows+1),
		fmt.Sprintf(`INSERT INTO archive SELECT id + %d, rev, at FROM orders`, defRows),
	} {
		_, err := db.Exec(q)
		must(t, err)
	}
	return path
}

// defConfig is the export of defSource's table with the given chunk key and unit of at.
func defConfig(state, src, table, key, unit, dest string) string {
	return fmt.Sprintf(`state: %s
exports:
  - name: orders
    source: sqlite://%s
    table: %s
    chunk_key: %s
    chunk_rows: %d
    time_units: {at: %s}
    destination: %s
`, state, src, table, key, defRows/10, unit, dest)
}

// TestE2EExportResumeRefusesAnotherDefinition kills an export after two of its ten parts and
// resumes it after editing its config: a changed chunk key, table or time unit is refused by
// name (exit 2), touching neither the prefix nor the journal, and the unchanged config then
// resumes to a dataset of exactly the source's rows, with the state file and with state:
// bucket (the run's definition is in the commit log).
func TestE2EExportResumeRefusesAnotherDefinition(t *testing.T) {
	for _, state := range []string{".wharf/state.db", export.StateBucket} {
		t.Run(strings.TrimPrefix(state, ".wharf/"), func(t *testing.T) {
			src := defSource(t)
			dir := t.TempDir()
			prefix := filepath.Join(dir, "out", "orders")
			dest := "./out/orders/"
			if state == export.StateBucket {
				dest = "file://" + filepath.ToSlash(prefix) + "/"
			}
			c := cli{dir: dir, env: []string{"WHARF_NODE_ID=node-a"}}
			write := func(table, key, unit string) {
				writeFiles(t, dir, map[string]string{"wharf.yaml": defConfig(state, src, table, key, unit, dest)})
			}
			write("orders", "id", "unix_seconds")
			interruptAfter(t, cli{dir: dir, env: []string{"WHARF_NODE_ID=node-a", envTestPause + "=after-part:150ms"}},
				prefix, 2, state == export.StateBucket)
			runs := runRecords(t, filepath.Join(dir, "wharf.yaml"))
			if len(runs) != 1 || runs[0].Status == dataset.StatusSucceeded {
				t.Fatalf("after the kill the journal holds %+v, want one unfinished run", runs)
			}
			before := dataSnapshot(t, filepath.Join(dir, "out"))

			for _, edit := range []struct{ field, table, key, unit string }{
				{"chunk_key", "orders", "rev", "unix_seconds"},
				{"table", "archive", "id", "unix_seconds"},
				{"time_units", "orders", "id", "unix_millis"},
			} {
				write(edit.table, edit.key, edit.unit)
				r := c.run(t, "export", "-c", "wharf.yaml", "--resume")
				if r.code != 2 || !strings.Contains(r.err, "WHARF_EXPORT_DEFINITION_CHANGED") ||
					!strings.Contains(r.err, "the keys that differ: "+edit.field+";") ||
					!strings.Contains(r.err, runs[0].RunID) || !strings.Contains(r.err, "without --resume") {
					t.Errorf("resume with another %s: exit %d, stderr %q; want 2 naming the field, the run and a plain run", edit.field, r.code, r.err)
				}
				if after := dataSnapshot(t, filepath.Join(dir, "out")); !maps.Equal(before, after) {
					t.Errorf("the refused resume (%s) changed the prefix", edit.field)
				}
				if now := runRecords(t, filepath.Join(dir, "wharf.yaml")); len(now) != 1 || now[0].Attempts != runs[0].Attempts {
					t.Errorf("the refused resume (%s) was journaled: %+v", edit.field, now)
				}
			}

			write("orders", "id", "unix_seconds")
			run := decodeRun(t, c.run(t, "export", "-c", "wharf.yaml", "--resume", "--format", "json").must(t, 0))
			if run.RunID != runs[0].RunID {
				t.Errorf("the unchanged config ran %s, not a resume of %s", run.RunID, runs[0].RunID)
			}
			c.run(t, "validate", "--deep", prefix).must(t, 0)
			if ids := sortedIDs(t, prefix, run.Parts); !isRange(ids, 1, defRows) {
				t.Errorf("the resumed dataset holds %d ids, want exactly 1..%d", len(ids), defRows)
			}
		})
	}
}

// interruptAfter starts `wharf export` in c's directory, waits for n parts under prefix and
// stops it: SIGKILL, or SIGTERM when graceful (a commit log is written at the end of a run
// shorter than its checkpoint interval, and a SIGKILL would leave nothing to resume).
func interruptAfter(t *testing.T, c cli, prefix string, n int, graceful bool) {
	t.Helper()
	cmd := c.command("export", "-c", "wharf.yaml")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	if !waitParts(prefix, n) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("no %d parts came: %s", n, stderr.String())
	}
	sig := os.Signal(syscall.SIGKILL)
	if graceful {
		sig = syscall.SIGTERM
	}
	must(t, cmd.Process.Signal(sig))
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 && graceful {
		t.Fatalf("the interrupted export ended %v: %s", err, stderr.String())
	}
}

// dataSnapshot is treeSnapshot without the lease and the store's own files (a refused run of
// state: bucket takes and releases the export's lease: that is all it writes).
func dataSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := treeSnapshot(t, dir)
	for p := range m {
		if strings.Contains(p, "/_wharf/leases/") || strings.Contains(p, "/_wharf/pointers/") || strings.Contains(p, "/.wharf-meta/") {
			delete(m, p)
		}
	}
	return m
}
