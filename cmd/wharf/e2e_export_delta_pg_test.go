package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/testenv"
)

// deltaRuns runs both delta exports of the config in dir once and returns, per export, the
// ids its run exported and its window.
func deltaRuns(t *testing.T, dir, wait string) map[string]deltaRun {
	t.Helper()
	r := cli{dir: dir, env: []string{"DELTA_WAIT=" + wait}}.run(t, "export", "-c", "wharf.yaml", "--format", "json").must(t, 0)
	out := map[string]deltaRun{}
	sc := bufio.NewScanner(strings.NewReader(r.out))
	for sc.Scan() {
		var run struct {
			exportRun
			Export string `json:"export"`
		}
		must(t, json.Unmarshal(sc.Bytes(), &run))
		m, err := dataset.DecodeManifest([]byte(readFile(t, filepath.Join(run.Prefix, dataset.ManifestKey))))
		must(t, err)
		out[run.Export] = deltaRun{ids: sortedIDs(t, run.Prefix, run.Parts), window: m.Cursor, stderr: r.err}
	}
	if len(out) != 2 {
		t.Fatalf("want two runs, got %q", r.out)
	}
	return out
}

type deltaRun struct {
	ids    []int64
	window *export.CursorWindow
	stderr string
}

// TestE2EExportDeltaLateCommitPostgres has a transaction insert a row and commit seconds
// later, after a delta run read past the row's cursor value (a later row committed first),
// with an integer cursor (a sequence) and a timestamp cursor (now()): a run that may not wait
// for it holds its window back and the next run exports the row; a run that may wait exports
// it itself. Across the runs every row is exported exactly once. It runs as the server's role,
// which sees every session's transaction, and as a role without pg_read_all_stats, which sees
// another role's transaction only in the snapshot, not when it began.
func TestE2EExportDeltaLateCommitPostgres(t *testing.T) {
	srv := testenv.Postgres(t)
	t.Run("superuser", func(t *testing.T) {
		name, db := freshPgDatabase(t, srv)
		lateCommits(t, db, srv.URLFor(t, name), srv.PasswordRef(t), "")
	})
	t.Run("unprivileged", func(t *testing.T) {
		name, db := freshPgDatabase(t, srv)
		role, pw := "wharf_e2e_reader_"+name[len("wharf_e2e_"):], hex.EncodeToString([]byte(name))
		admin := srv.DB(t, "")
		for _, q := range []string{`CREATE ROLE ` + role + ` LOGIN PASSWORD '` + pw + `'`, `GRANT CONNECT ON DATABASE ` + name + ` TO ` + role} {
			_, err := admin.Exec(q)
			must(t, err)
		}
		t.Cleanup(func() { // after the database is dropped (cleanups run last first)
			_, _ = admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
			_, _ = admin.Exec(`DROP ROLE IF EXISTS ` + role)
		})
		u, err := url.Parse(srv.URLFor(t, name))
		must(t, err)
		u.User = url.User(role)
		pwFile := filepath.Join(t.TempDir(), "pw")
		must(t, os.WriteFile(pwFile, []byte(pw), 0o600))
		lateCommits(t, db, u.String(), "file://"+pwFile, role)
	})
}

// lateCommits is TestE2EExportDeltaLateCommitPostgres in a fresh database db, exported from
// source as reader ("" for the server's role).
func lateCommits(t *testing.T, db *sql.DB, source, pw, reader string) {
	_, err := db.Exec(`CREATE TABLE ev (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), note text)`)
	must(t, err)
	if reader != "" {
		_, err := db.Exec(`GRANT SELECT ON ev TO ` + reader)
		must(t, err)
	}
	insert := func(n int) {
		for range n {
			_, err := db.Exec(`INSERT INTO ev (note) VALUES ('committed')`)
			must(t, err)
		}
	}
	dir := t.TempDir()
	entry := func(export, cursor string) string {
		return fmt.Sprintf(`  - name: %s
    source: %s
    password: %s
    table: ev
    chunk_key: id
    mode: delta
    cursor_column: %s
    delta_wait: ${env:DELTA_WAIT}
    destination: ./out/{export}/{run_id}/
`, export, source, pw, cursor)
	}
	writeFiles(t, dir, map[string]string{"wharf.yaml": "exports:\n" + entry("ids", "id") + entry("times", "at")})
	seen := map[string][]int64{}
	add := func(runs map[string]deltaRun) {
		for k, r := range runs {
			seen[k] = append(seen[k], r.ids...)
		}
	}

	insert(10)
	add(deltaRuns(t, dir, "1m"))

	// A late transaction: row 11 is inserted, row 12 commits, the run reads past both.
	late, err := db.BeginTx(context.Background(), nil)
	must(t, err)
	began := time.Now()
	_, err = late.Exec(`INSERT INTO ev (note) VALUES ('late')`)
	must(t, err)
	insert(1)
	held := deltaRuns(t, dir, "1s")
	add(held)
	for k, r := range held {
		if slices.Contains(r.ids, 12) || r.window == nil || r.window.Held == "" || !strings.Contains(r.stderr, "held back by an open transaction") {
			t.Fatalf("%s: with a transaction open the run exported %v, window %+v: want nothing, held and warned", k, r.ids, r.window)
		}
		t.Logf("%s: held: %s", k, r.window.Held)
		if unknown := strings.Contains(r.window.Held, "start is not known"); unknown != (reader != "") {
			t.Errorf("%s: as %q the held window says %q", k, reader, r.window.Held)
		}
	}
	time.Sleep(time.Until(began.Add(3 * time.Second)))
	must(t, late.Commit())
	next := deltaRuns(t, dir, "1s")
	add(next)
	for k, r := range next {
		if !slices.Equal(r.ids, []int64{11, 12}) || r.window.Held != "" {
			t.Errorf("%s: the run after the late commit exported %v (window %+v), want 11 and 12", k, r.ids, r.window)
		}
	}

	// A run that may wait: it waits for the open transaction, and exports its row itself.
	late, err = db.BeginTx(context.Background(), nil)
	must(t, err)
	_, err = late.Exec(`INSERT INTO ev (note) VALUES ('late')`)
	must(t, err)
	insert(1)
	go func() { time.Sleep(3 * time.Second); _ = late.Commit() }()
	waited := deltaRuns(t, dir, "1m")
	add(waited)
	for k, r := range waited {
		if !slices.Equal(r.ids, []int64{13, 14}) {
			t.Errorf("%s: the run that waited exported %v, want 13 and 14", k, r.ids)
		}
	}
	for k, ids := range seen {
		slices.Sort(ids)
		if !isRange(ids, 1, 14) {
			t.Errorf("%s: the runs exported %v, want 1..14 each once", k, ids)
		}
	}
}
