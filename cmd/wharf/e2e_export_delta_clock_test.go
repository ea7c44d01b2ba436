package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"
)

// TestE2EExportDeltaLateCommitWallClock is the late commit of
// TestE2EExportDeltaLateCommitPostgres with a timestamp without time zone as the cursor,
// written by now() in sessions whose TimeZone is 11 hours behind UTC (as a server installed in
// a western zone writes it by default): the column holds the writers' wall clock, not UTC.
// A transaction open past delta_wait must still hold the window back below the value it
// writes, so that the run after its commit exports its row; across the runs every row is
// exported exactly once.
func TestE2EExportDeltaLateCommitWallClock(t *testing.T) {
	srv := testenv.Postgres(t)
	name, _ := freshPgDatabase(t, srv)
	_, err := srv.DB(t, "").Exec(`ALTER DATABASE ` + name + ` SET TimeZone = 'Pacific/Pago_Pago'`)
	must(t, err)
	db := srv.DB(t, name) // its sessions start in the database's zone
	_, err = db.Exec(`CREATE TABLE ev (id bigserial PRIMARY KEY, at timestamp NOT NULL DEFAULT now(), note text)`)
	must(t, err)
	insert := func() {
		_, err := db.Exec(`INSERT INTO ev (note) VALUES ('committed')`)
		must(t, err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"wharf.yaml": fmt.Sprintf(`exports:
  - name: times
    source: %s
    password: %s
    table: ev
    chunk_key: id
    mode: delta
    cursor_column: at
    delta_wait: 1s
    destination: ./out/{run_id}/
`, srv.URLFor(t, name), srv.PasswordRef(t))})
	var seen []int64
	run := func() ([]int64, string) {
		t.Helper()
		r := cli{dir: dir}.run(t, "export", "-c", "wharf.yaml", "--format", "json").must(t, 0)
		got := decodeRun(t, r)
		ids := sortedIDs(t, got.Prefix, got.Parts)
		seen = append(seen, ids...)
		return ids, r.err
	}

	insert()
	run()
	late, err := db.BeginTx(context.Background(), nil)
	must(t, err)
	began := time.Now()
	_, err = late.Exec(`INSERT INTO ev (note) VALUES ('late')`) // row 2, its at taken now
	must(t, err)
	time.Sleep(20 * time.Millisecond)
	insert() // row 3 commits first, with a later at
	ids, stderr := run()
	if slices.Contains(ids, 2) || !strings.Contains(stderr, "held back by an open transaction") {
		t.Fatalf("with a transaction open the run exported %v (stderr %q): want the window held, without row 2", ids, stderr)
	}
	time.Sleep(time.Until(began.Add(2 * time.Second)))
	must(t, late.Commit())
	run()
	slices.Sort(seen)
	if !isRange(seen, 1, 3) {
		t.Errorf("the runs exported %v, want 1..3 each once: the late row is behind every later window", seen)
	}
}

// TestE2EExportDeltaDateCursorRepeats exports a table whose delta cursor is a date written by
// CURRENT_DATE: every row of a day has the same value, so a row added after a run, on the day
// it read as its largest value, must still be exported by a later run. Rows of today wait
// (the window says why) while rows of an earlier day go; once today's rows are of a past day
// (an UPDATE stands in for the days passing) the next run exports them. Every row is exported
// exactly once.
func TestE2EExportDeltaDateCursorRepeats(t *testing.T) {
	srv := testenv.Postgres(t)
	name, db := freshPgDatabase(t, srv)
	for _, q := range []string{
		`CREATE TABLE ev (id bigserial PRIMARY KEY, on_day date NOT NULL DEFAULT CURRENT_DATE, note text)`,
		`INSERT INTO ev (on_day, note) VALUES (CURRENT_DATE - 5, 'old')`,
		`INSERT INTO ev (note) VALUES ('today')`,
	} {
		_, err := db.Exec(q)
		must(t, err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"wharf.yaml": fmt.Sprintf(`exports:
  - name: days
    source: %s
    password: %s
    table: ev
    chunk_key: id
    mode: delta
    cursor_column: on_day
    delta_wait: 1s
    destination: ./out/{run_id}/
`, srv.URLFor(t, name), srv.PasswordRef(t))})
	var seen []int64
	run := func() []int64 {
		t.Helper()
		got := decodeRun(t, cli{dir: dir}.run(t, "export", "-c", "wharf.yaml", "--format", "json").must(t, 0))
		ids := sortedIDs(t, got.Prefix, got.Parts)
		seen = append(seen, ids...)
		return ids
	}
	if ids := run(); !slices.Equal(ids, []int64{1}) {
		t.Errorf("the first run exported %v, want the old day's row 1 only (today's may still get rows)", ids)
	}
	_, err := db.Exec(`INSERT INTO ev (note) VALUES ('today, after the run')`)
	must(t, err)
	run()
	_, err = db.Exec(`UPDATE ev SET on_day = on_day - 3 WHERE id > 1`) // the days pass
	must(t, err)
	run()
	slices.Sort(seen)
	if !isRange(seen, 1, 3) {
		t.Errorf("the runs exported %v, want 1..3 each once: a row added on the day a run read is behind every later window", seen)
	}
}

// TestE2EExportDeltaSQLiteSecondRepeats: a SQLite delta cursor filled by CURRENT_TIMESTAMP,
// which is to the second. A row written after a run, in the second the run read as its
// largest value, must still be exported: the rows of the current second wait for a later run,
// and every row is exported exactly once.
func TestE2EExportDeltaSQLiteSecondRepeats(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "src.db"))
	must(t, err)
	defer db.Close()
	exec := func(q string) {
		t.Helper()
		_, err := db.Exec(q)
		must(t, err)
	}
	exec(`CREATE TABLE ev (id INTEGER PRIMARY KEY, at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, note TEXT)`)
	exec(`INSERT INTO ev (at, note) VALUES ('2020-01-01 00:00:00', 'old')`)
	exec(`INSERT INTO ev (note) VALUES ('now')`)
	writeFiles(t, dir, map[string]string{"wharf.yaml": `exports:
  - name: ev
    source: sqlite://src.db
    table: ev
    chunk_key: id
    mode: delta
    cursor_column: at
    destination: ./out/{run_id}/
`})
	var seen []int64
	run := func() []int64 {
		t.Helper()
		got := decodeRun(t, cli{dir: dir}.run(t, "export", "-c", "wharf.yaml", "--format", "json").must(t, 0))
		ids := sortedIDs(t, got.Prefix, got.Parts)
		seen = append(seen, ids...)
		return ids
	}
	if ids := run(); !slices.Equal(ids, []int64{1}) {
		t.Errorf("the first run exported %v, want the old row 1 only (the current second may still get rows)", ids)
	}
	exec(`INSERT INTO ev (at, note) SELECT max(at), 'the same second, after the run' FROM ev`)
	run()
	exec(`UPDATE ev SET at = datetime(at, '-1 hour') WHERE id > 1`) // the second passes
	run()
	slices.Sort(seen)
	if !isRange(seen, 1, 3) {
		t.Errorf("the runs exported %v, want 1..3 each once: a row written in the second a run read is behind every later window", seen)
	}
}
