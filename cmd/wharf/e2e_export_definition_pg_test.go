package main

import (
	"database/sql"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/internal/testenv"
)

// TestE2EExportResumeRefusesAnotherPostgresSource kills an export whose source URL names no
// database, so that PGDATABASE (the environment pgx reads, as libpq does) decides which one it
// reads, and resumes it with the environment pointing elsewhere: another database, or
// PGOPTIONS setting a search_path under which its table is another schema's. Each is another
// source with the config untouched; each resume is refused naming source (exit 2), touching
// neither the prefix nor the journal, and the first environment then resumes to exactly its
// database's rows.
func TestE2EExportResumeRefusesAnotherPostgresSource(t *testing.T) {
	srv := testenv.Postgres(t)
	first, db := freshPgDatabase(t, srv)
	second, other := freshPgDatabase(t, srv)
	fill := func(db *sql.DB, table string, from int) {
		t.Helper()
		_, err := db.Exec(fmt.Sprintf(`CREATE TABLE %s (id bigint PRIMARY KEY, note text NOT NULL);
INSERT INTO %[1]s SELECT i, 'row ' || i FROM generate_series(%d, %d) AS i`, table, from, from+defRows-1))
		must(t, err)
	}
	fill(db, "orders", 1)
	_, err := db.Exec(`CREATE SCHEMA shadow`)
	must(t, err)
	fill(db, "shadow.orders", 5*defRows+1)
	fill(other, "orders", 9*defRows+1)

	u, err := url.Parse(srv.URL)
	must(t, err)
	u.Path = "" // the database comes from PGDATABASE
	dir := t.TempDir()
	prefix := filepath.Join(dir, "out")
	writeFiles(t, dir, map[string]string{"wharf.yaml": fmt.Sprintf(`exports:
  - name: orders
    source: %s
    password: %s
    table: orders
    chunk_key: id
    chunk_rows: %d
    destination: ./out/
`, u, srv.PasswordRef(t), defRows/10)})
	env := func(extra ...string) cli {
		return cli{dir: dir, env: append([]string{"WHARF_NODE_ID=node-a"}, extra...)}
	}
	interruptAfter(t, env("PGDATABASE="+first, envTestPause+"=after-part:150ms"), prefix, 2, false)
	runs := runRecords(t, filepath.Join(dir, "wharf.yaml"))
	if len(runs) != 1 || runs[0].Status == dataset.StatusSucceeded {
		t.Fatalf("after the kill the journal holds %+v, want one unfinished run", runs)
	}
	before := dataSnapshot(t, prefix)

	for _, moved := range [][]string{
		{"PGDATABASE=" + second},
		{"PGDATABASE=" + first, "PGOPTIONS=-c search_path=shadow"},
	} {
		r := env(moved...).run(t, "export", "-c", "wharf.yaml", "--resume")
		if r.code != 2 || !strings.Contains(r.err, "WHARF_EXPORT_DEFINITION_CHANGED") ||
			!strings.Contains(r.err, "the keys that differ: source;") || !strings.Contains(r.err, runs[0].RunID) {
			t.Errorf("resume with %v: exit %d, stderr %q; want 2 naming source and the run", moved, r.code, r.err)
		}
		if after := dataSnapshot(t, prefix); !maps.Equal(before, after) {
			t.Errorf("the refused resume (%v) changed the prefix", moved)
		}
		if now := runRecords(t, filepath.Join(dir, "wharf.yaml")); len(now) != 1 || now[0].Attempts != runs[0].Attempts {
			t.Errorf("the refused resume (%v) was journaled: %+v", moved, now)
		}
	}

	run := decodeRun(t, env("PGDATABASE="+first).run(t, "export", "-c", "wharf.yaml", "--resume", "--format", "json").must(t, 0))
	if run.RunID != runs[0].RunID {
		t.Errorf("the first environment ran %s, not a resume of %s", run.RunID, runs[0].RunID)
	}
	cli{}.run(t, "validate", "--deep", prefix).must(t, 0)
	if ids := sortedIDs(t, prefix, run.Parts); !isRange(ids, 1, defRows) {
		t.Errorf("the resumed dataset holds %d ids (%v…), want exactly 1..%d of %s", len(ids), ids[:min(3, len(ids))], defRows, first)
	}
}
