package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/testenv"
)

// The moving rows: movers[id] is the chunk key an UPDATE gives the row while the run is
// between its first and second parts. Row 40 leaves the first chunk (already read) for the
// last; row 950 leaves the last chunk for the first.
var movers = map[int64]int64{40: 940, 950: 50}

const moveRows = 1000 // rows id 1..moveRows with k = id, ten chunks of k

// moveDuringRun runs the export of cfg (its table chunked on k in ten chunks, --parallel 1,
// a pause after each part), and once the first part is written moves the rows of movers with
// update. It returns the run and every (id, k) the parts hold.
func moveDuringRun(t *testing.T, dir string, update func(id, k int64)) (exportRun, [][2]int64) {
	t.Helper()
	c := cli{dir: dir, env: []string{envTestPause + "=after-part:250ms"}}
	cmd := c.command("export", "-c", "wharf.yaml", "--format", "json")
	var out, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &stderr
	must(t, cmd.Start())
	prefix := filepath.Join(dir, "out")
	if !waitParts(prefix, 1) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("no first part came: %s", stderr.String())
	}
	for _, id := range slices.Sorted(maps.Keys(movers)) {
		update(id, movers[id])
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr.String())
	}
	if len(partFiles(prefix)) < 3 {
		t.Fatalf("the run wrote %d parts: the updates did not land between its chunks", len(partFiles(prefix)))
	}
	var run exportRun
	must(t, json.Unmarshal([]byte(out.String()), &run))
	var rows [][2]int64
	for _, p := range run.Parts {
		rows = append(rows, readIDKeys(t, filepath.Join(run.Prefix, p.Key))...)
	}
	return run, rows
}

// readIDKeys reads the id and k columns of a Parquet part.
func readIDKeys(t *testing.T, path string) [][2]int64 {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	must(t, err)
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	must(t, err)
	tbl, err := fr.ReadTable(context.Background())
	must(t, err)
	defer tbl.Release()
	col := func(name string) []int64 {
		var out []int64
		for _, c := range tbl.Column(tbl.Schema().FieldIndices(name)[0]).Data().Chunks() {
			out = append(out, c.(*array.Int64).Int64Values()...)
		}
		return out
	}
	ids, ks := col("id"), col("k")
	rows := make([][2]int64, len(ids))
	for i := range ids {
		rows[i] = [2]int64{ids[i], ks[i]}
	}
	return rows
}

// checkConsistency checks the rows of a run that moved movers during it: in mode snapshot
// every row exactly once with its chunk key at the snapshot (k = id), and a manifest saying
// so; in mode chunk what docs/export.md says: each chunk holds the rows in its range when it
// was read, so the row moved into a chunk already read is missing, the row moved into a chunk
// still to read is there twice (its old key and its new), and every other row once.
func checkConsistency(t *testing.T, mode export.ConsistencyMode, run exportRun, rows [][2]int64, pg bool) {
	t.Helper()
	count := map[int64]int{}
	for _, r := range rows {
		count[r[0]]++
		if mode == export.ConsistencySnapshot && r[1] != r[0] {
			t.Errorf("row %d has k %d: not the table at the snapshot (k %d)", r[0], r[1], r[0])
		}
	}
	for id := int64(1); id <= moveRows; id++ {
		want := 1
		if mode == export.ConsistencyChunk && id == 40 {
			want = 2
		} else if mode == export.ConsistencyChunk && id == 950 {
			want = 0
		}
		if count[id] != want {
			t.Errorf("consistency %s: row %d is in the dataset %d times, want %d", mode, id, count[id], want)
		}
	}
	m, err := dataset.DecodeManifest([]byte(readFile(t, filepath.Join(run.Prefix, dataset.ManifestKey))))
	must(t, err)
	switch c := m.Consistency; {
	case c == nil || c.Mode != mode || c.Requested != "":
		t.Errorf("the manifest's consistency is %+v, want mode %s", c, mode)
	case mode == export.ConsistencySnapshot && pg && (c.Snapshot == "" || c.PGSnapshot == "" || c.TakenAt.IsZero()):
		t.Errorf("the manifest does not name the PostgreSQL snapshot: %+v", c)
	case mode == export.ConsistencyChunk && (c.Snapshot != "" || c.PGSnapshot != ""):
		t.Errorf("a chunk run's manifest names a snapshot: %+v", c)
	}
	wharf(t, "validate", "--deep", run.Prefix).must(t, 0)
}

func moveConfig(source, password, table string, mode export.ConsistencyMode) string {
	pw := ""
	if password != "" {
		pw = "\n    password: " + password
	}
	return fmt.Sprintf(`exports:
  - name: moving
    source: %s%s
    table: %s
    chunk_key: k
    chunk_rows: %d
    consistency: %s
    destination: ./out/
`, source, pw, table, moveRows/10, mode)
}

// TestE2EExportConsistencyPostgres moves two rows between chunks with UPDATEs while a
// ten-chunk export of PostgreSQL runs, in both consistency modes.
func TestE2EExportConsistencyPostgres(t *testing.T) {
	srv := testenv.Postgres(t)
	db := srv.DB(t, "")
	for _, mode := range []export.ConsistencyMode{export.ConsistencySnapshot, export.ConsistencyChunk} {
		t.Run(string(mode), func(t *testing.T) {
			table := "wharf_e2e_moving_" + string(mode)
			for _, q := range []string{`DROP TABLE IF EXISTS ` + table,
				`CREATE TABLE ` + table + ` (id bigint PRIMARY KEY, k bigint NOT NULL)`,
				fmt.Sprintf(`INSERT INTO %s SELECT g, g FROM generate_series(1, %d) g`, table, moveRows)} {
				_, err := db.Exec(q)
				must(t, err)
			}
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"wharf.yaml": moveConfig(srv.URL, srv.PasswordRef(t), table, mode)})
			run, rows := moveDuringRun(t, dir, func(id, k int64) {
				_, err := db.Exec(`UPDATE `+table+` SET k = $1 WHERE id = $2`, k, id)
				must(t, err)
			})
			checkConsistency(t, mode, run, rows, true)
		})
	}
}

// TestE2EExportConsistencySQLite is TestE2EExportConsistencyPostgres on a SQLite source in WAL
// mode (a writer commits while a reader's transaction is open).
func TestE2EExportConsistencySQLite(t *testing.T) {
	for _, mode := range []export.ConsistencyMode{export.ConsistencySnapshot, export.ConsistencyChunk} {
		t.Run(string(mode), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "moving.db")
			db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)")
			must(t, err)
			defer db.Close()
			for _, q := range []string{`CREATE TABLE moving (id INTEGER PRIMARY KEY, k INTEGER NOT NULL)`,
				fmt.Sprintf(`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < %d)
INSERT INTO moving SELECT i, i FROM g`, moveRows)} {
				_, err := db.Exec(q)
				must(t, err)
			}
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"wharf.yaml": moveConfig("sqlite://"+path, "", "moving", mode)})
			run, rows := moveDuringRun(t, dir, func(id, k int64) {
				_, err := db.Exec(`UPDATE moving SET k = ? WHERE id = ?`, k, id)
				must(t, err)
			})
			checkConsistency(t, mode, run, rows, false)
		})
	}
}

// TestE2EExportResumedSnapshotIsNotOneSnapshot kills a snapshot run after two parts and
// resumes it: the snapshot ended with the killed process, so the resumed run's manifest says
// its parts are not of one snapshot (mode chunk, requested snapshot), and a plain run after it
// is one snapshot again.
func TestE2EExportResumedSnapshotIsNotOneSnapshot(t *testing.T) {
	src := defSource(t)
	dir := t.TempDir()
	prefix := filepath.Join(dir, "out", "orders")
	writeFiles(t, dir, map[string]string{"wharf.yaml": defConfig(".wharf/state.db", src, "orders", "id", "unix_seconds", "./out/orders/")})
	interruptAfter(t, cli{dir: dir, env: []string{envTestPause + "=after-part:150ms"}}, prefix, 2, false)
	c := cli{dir: dir}
	r := c.run(t, "export", "-c", "wharf.yaml", "--resume", "--format", "json").must(t, 0)
	if !strings.Contains(r.err, "not one snapshot") {
		t.Errorf("the resume does not warn that it is not one snapshot: %q", r.err)
	}
	manifest := func() *export.Consistency {
		m, err := dataset.DecodeManifest([]byte(readFile(t, filepath.Join(prefix, dataset.ManifestKey))))
		must(t, err)
		return m.Consistency
	}
	if got := manifest(); got == nil || got.Mode != export.ConsistencyChunk || got.Requested != export.ConsistencySnapshot {
		t.Errorf("the resumed run's manifest says consistency %+v, want mode chunk, requested snapshot", got)
	}
	c.run(t, "validate", "--deep", prefix).must(t, 0)
	c.run(t, "export", "-c", "wharf.yaml").must(t, 0)
	if got := manifest(); got == nil || got.Mode != export.ConsistencySnapshot || got.Requested != "" {
		t.Errorf("a plain run's manifest says consistency %+v, want snapshot", got)
	}
}

// TestE2EExportSnapshotYieldsToDDL issues an ALTER TABLE while a snapshot run of the table is
// between chunks: the ALTER waits for the run's snapshot, and the next chunk's read would wait
// behind the ALTER for ever; the run fails within its lock timeout, naming why, and the ALTER
// then completes (as pg_dump -j gives up rather than deadlock).
func TestE2EExportSnapshotYieldsToDDL(t *testing.T) {
	srv := testenv.Postgres(t)
	name, db := freshPgDatabase(t, srv)
	for _, q := range []string{`CREATE TABLE moving (id bigint PRIMARY KEY, k bigint NOT NULL)`,
		fmt.Sprintf(`INSERT INTO moving SELECT g, g FROM generate_series(1, %d) g`, moveRows)} {
		_, err := db.Exec(q)
		must(t, err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"wharf.yaml": moveConfig(srv.URLFor(t, name), srv.PasswordRef(t), "moving", export.ConsistencySnapshot)})
	cmd := cli{dir: dir, env: []string{envTestPause + "=after-part:250ms"}}.command("export", "-c", "wharf.yaml")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	if !waitParts(filepath.Join(dir, "out"), 1) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("no first part came: %s", stderr.String())
	}
	altered := make(chan error, 1)
	go func() {
		_, err := db.Exec(`ALTER TABLE moving ADD COLUMN note text`)
		altered <- err
	}()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "lock timeout") ||
		!strings.Contains(stderr.String(), "consistency: chunk") {
		t.Errorf("the run beside an ALTER ended %v: %s; want exit 1 naming the lock and what to do", err, stderr.String())
	}
	if err := <-altered; err != nil {
		t.Errorf("the ALTER failed: %v", err)
	}
}

// freshPgDatabase creates a database of its own on the test server (so that no other test's
// transaction is open in it) and drops it when t ends.
func freshPgDatabase(t *testing.T, srv testenv.PostgresServer) (string, *sql.DB) {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "wharf_e2e_" + hex.EncodeToString(b[:])
	admin := srv.DB(t, "")
	_, err := admin.Exec(`CREATE DATABASE ` + name)
	must(t, err)
	t.Cleanup(func() { _, _ = admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`) })
	return name, srv.DB(t, name)
}
