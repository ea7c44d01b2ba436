package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/load"
)

// loadCase is a PostgreSQL source table (pgMixedTable), a config exporting it with
// destination ./out/{export}/{run_id}/ and loading it into a table of its own, with a ledger
// of its own.
type loadCase struct {
	db            *sql.DB
	dir, cfg, src string
	dst, ledger   string
	source, pwRef string
}

func newLoadCase(t *testing.T, extra string) *loadCase {
	t.Helper()
	srv := testenv.Postgres(t)
	c := &loadCase{dir: t.TempDir(), source: srv.URL, pwRef: srv.PasswordRef(t)}
	c.src = pgMixedTable(t, srv)
	c.dst, c.ledger = c.src+"_loaded", c.src+"_ledger"
	cfg, err := pgx.ParseConfig(srv.URL)
	must(t, err)
	cfg.Password = srv.Password
	c.db = stdlib.OpenDB(*cfg)
	t.Cleanup(func() { c.db.Close() })
	c.exec(t, `DROP TABLE IF EXISTS `+c.dst, `DROP TABLE IF EXISTS `+c.ledger)
	c.cfg = filepath.Join(c.dir, "wharf.yaml")
	body := fmt.Sprintf(`state: .wharf/state.db
exports:
  - name: pg
    source: %s
    password: %s
    table: %s
    chunk_key: id
    chunk_rows: 100
    destination: ./out/{export}/{run_id}/
load:
  pg:
    target: %s
    password: %s
    table: %s
    ledger: %s
%s`, c.source, c.pwRef, c.src, c.source, c.pwRef, c.dst, c.ledger, extra)
	must(t, os.WriteFile(c.cfg, []byte(body), 0o644))
	return c
}

func (c *loadCase) exec(t *testing.T, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := c.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func (c *loadCase) count(t *testing.T, q string) int {
	t.Helper()
	var n int
	if err := c.db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// export runs an export and returns its run id.
func (c *loadCase) export(t *testing.T) string {
	t.Helper()
	wharf(t, "export", "-c", c.cfg).must(t, 0)
	return runRecords(t, c.cfg)[0].RunID
}

// load runs `wharf load --format json` and decodes its result.
func (c *loadCase) load(t *testing.T, code int, args ...string) (load.Result, result) {
	t.Helper()
	r := wharf(t, append([]string{"load", "-c", c.cfg, "--format", "json"}, args...)...).must(t, code)
	var res load.Result
	if code == 0 {
		if err := json.Unmarshal([]byte(r.out), &res); err != nil {
			t.Fatalf("load output %q: %v", r.out, err)
		}
	}
	return res, r
}

// sourceCols selects the source's columns as the loaded table holds them (json is jsonb).
const sourceCols = `id, small, i, f4, f8, amount, name, raw, ok, d, ts, tz, u, j::jsonb`

// same fails t unless the loaded table holds exactly the source's rows, compared by an
// independent query: EXCEPT ALL both ways, and the counts.
func (c *loadCase) same(t *testing.T) {
	t.Helper()
	src := `SELECT ` + sourceCols + ` FROM ` + c.src
	dst := `SELECT ` + strings.ReplaceAll(sourceCols, "::jsonb", "") + ` FROM ` + c.dst
	if n := c.count(t, `SELECT count(*) FROM (`+src+` EXCEPT ALL `+dst+`) x`); n != 0 {
		t.Errorf("%d source rows are not in the loaded table", n)
	}
	if n := c.count(t, `SELECT count(*) FROM (`+dst+` EXCEPT ALL `+src+`) x`); n != 0 {
		t.Errorf("%d loaded rows are not in the source", n)
	}
}

// TestE2ELoadReplace exports a table of every mapped type from PostgreSQL and loads it into
// another table: the rows equal the source's; a rerun loads nothing; after the source
// changes, a new run replaces the rows; the older run is then refused, unless --force.
func TestE2ELoadReplace(t *testing.T) {
	c := newLoadCase(t, "")
	run1 := c.export(t)
	res, _ := c.load(t, 0, "--run-id", run1)
	if !res.Loaded || !res.Created || res.Rows != pgRows+1 || res.RunID != run1 || res.Mode != load.ModeReplace {
		t.Fatalf("first load: %+v", res)
	}
	c.same(t)
	if n := c.count(t, `SELECT count(*) FROM `+c.ledger+` WHERE run_id = '`+run1+`' AND rows = `+fmt.Sprint(pgRows+1)); n != 1 {
		t.Fatalf("the ledger has %d rows of run %s", n, run1)
	}

	res, _ = c.load(t, 0, "--run-id", run1)
	if res.Loaded || !strings.Contains(res.Note, "nothing to do") {
		t.Fatalf("a rerun of a loaded run: %+v", res)
	}

	c.exec(t, `DELETE FROM `+c.src+` WHERE id BETWEEN 10 AND 19`,
		`UPDATE `+c.src+` SET name = 'changed', amount = amount + 1 WHERE id BETWEEN 100 AND 120`,
		`INSERT INTO `+c.src+` (id, name) VALUES (1001, 'new'), (1002, 'newer')`)
	time.Sleep(1100 * time.Millisecond) // a later run id, by the second
	run2 := c.export(t)
	res, _ = c.load(t, 0) // the last run
	if !res.Loaded || res.Created || res.RunID != run2 || res.Rows != pgRows+1-10+2 {
		t.Fatalf("second load: %+v", res)
	}
	c.same(t)

	_, r := c.load(t, 1, "--run-id", run1)
	if !strings.Contains(r.err, "WHARF_LOAD_REFUSED") || !strings.Contains(r.err, run2) {
		t.Fatalf("loading the older run: %s", r.err)
	}
	res, _ = c.load(t, 0, "--run-id", run1, "--force")
	if !res.Loaded || res.Rows != pgRows+1 {
		t.Fatalf("forced load of the older run: %+v", res)
	}
	// The ledger has run 2 with its manifest, but the table now holds run 1: a load of run 2
	// must load it again, not call it done.
	res, _ = c.load(t, 0, "--run-id", run2)
	if !res.Loaded || res.Rows != pgRows+1-10+2 {
		t.Fatalf("run 2 after a forced run 1: %+v", res)
	}
	c.same(t)
	if res, _ = c.load(t, 0, "--run-id", run2); res.Loaded {
		t.Fatalf("run 2 loaded twice in a row: %+v", res)
	}
}

// TestE2ELoadAppendAndMerge: a delta run appended after a full one gives exactly the source
// (no row twice); a second full run merged on id gives exactly the source after updates and
// inserts.
func TestE2ELoadAppendAndMerge(t *testing.T) {
	t.Run("append", func(t *testing.T) {
		c := newLoadCase(t, "    mode: append\n")
		body, err := os.ReadFile(c.cfg)
		must(t, err)
		must(t, os.WriteFile(c.cfg, bytes.Replace(body, []byte("    chunk_rows: 100\n"), []byte("    chunk_rows: 100\n    mode: delta\n    cursor_column: id\n"), 1), 0o644))
		c.exec(t, `DELETE FROM `+c.src+` WHERE id = `+fmt.Sprint(pgRows+1)) // a NULL-only row has a cursor
		c.export(t)
		c.load(t, 0)
		c.exec(t, `INSERT INTO `+c.src+` SELECT id + 1000, small, i, f4, f8, amount, name, raw, ok, d, ts, tz, u, j FROM `+c.src+` WHERE id <= 50`)
		time.Sleep(1100 * time.Millisecond)
		c.export(t)
		res, _ := c.load(t, 0)
		if !res.Loaded || res.Rows != 50 {
			t.Fatalf("appending the delta run: %+v", res)
		}
		c.same(t)
	})
	t.Run("merge", func(t *testing.T) {
		c := newLoadCase(t, "    mode: merge\n    key: [id]\n")
		c.exec(t, `DELETE FROM `+c.src+` WHERE id = `+fmt.Sprint(pgRows+1))
		c.export(t)
		c.load(t, 0)
		c.exec(t, `UPDATE `+c.src+` SET name = 'merged', j = '{"m": 1}' WHERE id % 7 = 0`,
			`INSERT INTO `+c.src+` (id, name) VALUES (5000, 'inserted')`)
		time.Sleep(1100 * time.Millisecond)
		c.export(t)
		res, _ := c.load(t, 0)
		if !res.Loaded || res.Rows != pgRows+1 {
			t.Fatalf("merging the second run: %+v", res)
		}
		c.same(t)
	})
}

// TestE2ELoadRefusals: a table that does not fit, a part changed since it was certified and
// a merge without key columns are each refused by name, and nothing is written.
func TestE2ELoadRefusals(t *testing.T) {
	c := newLoadCase(t, "")
	c.export(t)
	c.exec(t, `CREATE TABLE `+c.dst+` (id text, name text)`)
	_, r := c.load(t, 1)
	if !strings.Contains(r.err, "WHARF_LOAD_REFUSED") || !strings.Contains(r.err, `column \"id\" is text`) || !strings.Contains(r.err, `column \"small\" is missing`) {
		t.Fatalf("a table that does not fit: %s", r.err)
	}
	c.exec(t, `DROP TABLE `+c.dst)
	_, r = c.load(t, 2, "--mode", "merge")
	if !strings.Contains(r.err, "WHARF_LOAD_CONFIG_INVALID") || !strings.Contains(r.err, "key") {
		t.Fatalf("merge without a key: %s", r.err)
	}
	c.exec(t, `INSERT INTO `+c.src+` (id, name) VALUES (5, 'one key twice')`)
	time.Sleep(1100 * time.Millisecond)
	run := c.export(t)
	_, r = c.load(t, 1, "--mode", "merge", "--key", "id")
	if !strings.Contains(r.err, "WHARF_LOAD_REFUSED") || !strings.Contains(r.err, "two rows with one key") {
		t.Fatalf("a merge of a run with one key twice: %s", r.err)
	}
	parts, err := filepath.Glob(filepath.Join(c.dir, "out", "pg", run, "part-*"))
	if err != nil || len(parts) == 0 {
		t.Fatalf("parts of run %s: %v %v", run, parts, err)
	}
	b, err := os.ReadFile(parts[0])
	must(t, err)
	b[len(b)/2] ^= 0xff
	must(t, os.WriteFile(parts[0], b, 0o644))
	_, r = c.load(t, 1)
	if !strings.Contains(r.err, "WHARF_LOAD_REFUSED") || !strings.Contains(r.err, "not a certified run") || !strings.Contains(r.err, filepath.Base(parts[0])) {
		t.Fatalf("a part changed since it was certified: %s", r.err)
	}
	if n := c.count(t, `SELECT count(*) FROM `+c.ledger); n != 0 {
		t.Fatalf("the ledger has %d rows after refusals", n)
	}
	if n := c.count(t, `SELECT count(*) FROM pg_class WHERE relname = '`+c.dst+`'`); n != 0 {
		t.Fatal("a refused load created the table")
	}
}

// TestE2ELoadCrash SIGKILLs `wharf load` at random points of a load that replaces an earlier
// one (pausing after each part, WHARF_TEST_LOAD_PAUSE): after each kill the table holds the
// earlier run's rows or, had the commit come first, the new run's, never a mixture, and the
// ledger agrees; a rerun then gives exactly the new run, once.
func TestE2ELoadCrash(t *testing.T) {
	c := newLoadCase(t, "")
	c.export(t)
	c.load(t, 0)
	before := c.count(t, `SELECT count(*) FROM `+c.dst)
	c.exec(t, `INSERT INTO `+c.src+` (id, name) SELECT g, 'later' FROM generate_series(2000, 2099) g`)
	time.Sleep(1100 * time.Millisecond)
	run2 := c.export(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for i := range 3 {
		cmd := cli{env: []string{envTestLoad + "=after-part:300ms"}}.command("load", "-c", c.cfg)
		must(t, cmd.Start())
		time.Sleep(time.Duration(100+rng.IntN(1400)) * time.Millisecond) // 5 parts: ~1.5 s of pauses
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		loaded := c.count(t, `SELECT count(*) FROM `+c.ledger+` WHERE run_id = '`+run2+`'`)
		rows := c.count(t, `SELECT count(*) FROM `+c.dst)
		switch {
		case loaded == 0 && rows == before:
		case loaded == 1 && rows == before+100:
			c.same(t)
		default:
			t.Fatalf("kill %d: the table has %d rows (before %d), the ledger %d row(s) of the run", i, rows, before, loaded)
		}
		t.Logf("kill %d: committed %v", i, loaded == 1)
	}
	c.load(t, 0)
	c.same(t)
	if n := c.count(t, `SELECT count(*) FROM `+c.ledger+` WHERE run_id = '`+run2+`'`); n != 1 {
		t.Fatalf("the ledger has %d rows of the run", n)
	}
}

// TestE2ELoadTwoAtOnce starts two loads of one run into one table at once, in append mode
// (where a second copy would show), each pausing after every part so that they overlap: one
// loads, the other finds the run loaded and loads nothing, and the table holds each source
// row once, with one ledger row.
func TestE2ELoadTwoAtOnce(t *testing.T) {
	c := newLoadCase(t, "")
	run := c.export(t)
	var procs []*proc
	for range 2 {
		procs = append(procs, start(t, cli{env: []string{envTestLoad + "=after-part:200ms"}}.command(
			"load", "-c", c.cfg, "--mode", "append", "--format", "json")))
	}
	loaded := 0
	for i, p := range procs {
		if code := p.wait(); code != 0 {
			t.Fatalf("load %d: exit %d\n%s", i, code, p.err.String())
		}
		var res load.Result
		must(t, json.Unmarshal(p.out.Bytes(), &res))
		if res.Loaded {
			loaded++
		}
	}
	if loaded != 1 {
		t.Fatalf("%d of the two loads loaded the run, want exactly one", loaded)
	}
	c.same(t)
	if n := c.count(t, `SELECT count(*) FROM `+c.ledger+` WHERE run_id = '`+run+`'`); n != 1 {
		t.Fatalf("the ledger has %d rows of the run", n)
	}
}

// TestE2ELoadPool loads 8 exports at once (--pool 8), each into its own table.
func TestE2ELoadPool(t *testing.T) {
	c := newLoadCase(t, "")
	var exports, loads strings.Builder
	for i := range 8 {
		fmt.Fprintf(&exports, "  - name: pg%d\n    source: %s\n    password: %s\n    table: %s\n    chunk_key: id\n    chunk_rows: 100\n    destination: ./out/{export}/\n", i, c.source, c.pwRef, c.src)
		fmt.Fprintf(&loads, "  pg%d:\n    target: %s\n    password: %s\n    table: %s_%d\n    ledger: %s\n", i, c.source, c.pwRef, c.dst, i, c.ledger)
		c.exec(t, fmt.Sprintf(`DROP TABLE IF EXISTS %s_%d`, c.dst, i))
	}
	must(t, os.WriteFile(c.cfg, []byte("state: .wharf/state.db\nexports:\n"+exports.String()+"load:\n"+loads.String()), 0o644))
	wharf(t, "export", "-c", c.cfg).must(t, 0)
	r := wharf(t, "load", "-c", c.cfg, "--pool", "8", "--format", "json").must(t, 0)
	if n := strings.Count(r.out, `"loaded":true`); n != 8 {
		t.Fatalf("%d of 8 loads loaded:\n%s", n, r.out)
	}
	for i := range 8 {
		if n := c.count(t, fmt.Sprintf(`SELECT count(*) FROM %s_%d`, c.dst, i)); n != pgRows+1 {
			t.Errorf("table %d holds %d rows", i, n)
		}
	}
}

// TestE2ELoadBackfillRecords backfills NDJSON objects into a store sink and loads that
// dataset by its URL into a table of one jsonb column: one row a record, equal as JSON to the
// records, each once; a rerun loads nothing. With --columns it loads the records' fields
// into named, typed columns (merged on two of them); a field not of its column's type fails
// the load, leaving no table.
func TestE2ELoadBackfillRecords(t *testing.T) {
	c := newLoadCase(t, "")
	src, lake := filepath.Join(c.dir, "logs"), filepath.Join(c.dir, "lake")
	var want []string
	files := map[string]string{}
	for f := range 3 {
		var b strings.Builder
		for i := range 40 {
			rec := fmt.Sprintf(`{"file": %d, "i": %d, "msg": "line \"%d\""}`, f, i, i)
			want = append(want, rec)
			b.WriteString(rec + "\n")
		}
		files[fmt.Sprintf("logs/app-%d.ndjson", f)] = b.String()
	}
	writeFiles(t, c.dir, files)
	must(t, os.MkdirAll(lake, 0o755))
	wharf(t, backfillArgs(src, lake+"/", "--job", "loadme")...).must(t, 0)
	args := []string{"load", lake + "/", "--target", c.source, "--table", c.dst, "--format", "json"}
	if c.pwRef != "" {
		args = append(args, "--password", c.pwRef)
	}
	r := wharf(t, args...).must(t, 0)
	var res load.Result
	must(t, json.Unmarshal([]byte(r.out), &res))
	if !res.Loaded || res.Rows != int64(len(want)) || res.Export != "backfill:loadme" {
		t.Fatalf("load of the backfill's records: %+v", res)
	}
	if n := c.count(t, `SELECT count(*) FROM `+c.dst); n != len(want) {
		t.Fatalf("the table holds %d rows, want %d", n, len(want))
	}
	values := "('" + strings.Join(want, "'), ('") + "')"
	q := `SELECT count(*) FROM (SELECT record FROM ` + c.dst + ` EXCEPT ALL SELECT v::jsonb FROM (VALUES ` + values + `) AS w(v)) x`
	if n := c.count(t, q); n != 0 {
		t.Fatalf("%d loaded records are not the backfilled ones", n)
	}
	prom := filepath.Join(c.dir, "load.prom")
	r = wharf(t, append(slices.Clone(args), "--metrics-file", prom)...).must(t, 0)
	if !strings.Contains(r.out, `"loaded":false`) {
		t.Fatalf("a rerun: %s", r.out)
	}
	if m := metricsAt(t, prom); !hasValue(m, "wharf_job_loaded{name="+lake+"/}", 0) || m["wharf_job_success{name="+lake+"/}"] != 1 ||
		m["wharf_job_run_info{name="+lake+"/,run_id="+res.RunID+"}"] != 1 {
		t.Errorf("the rerun's metrics file: %v", m)
	}
	r = wharf(t, "load", lake+"/", "--table", c.dst)
	if r.code != 2 || !strings.Contains(r.err, "--target") {
		t.Fatalf("a URL without --target: exit %d, %s", r.code, r.err)
	}

	// Named columns taken from the records' fields, merged on two of them.
	named := append(slices.Clone(args), "--columns", "file:integer,i:bigint,msg:text,extra", "--mode", "merge", "--key", "file,i")
	named[slices.Index(named, c.dst)] = c.dst + "_named"
	r = wharf(t, named...).must(t, 0)
	if !strings.Contains(r.out, `"loaded":true`) {
		t.Fatalf("a load into named columns: %s", r.out)
	}
	q = `SELECT count(*) FROM (SELECT file, i, msg FROM ` + c.dst + `_named WHERE extra IS NULL EXCEPT ALL
SELECT (v::jsonb->>'file')::int, (v::jsonb->>'i')::bigint, v::jsonb->>'msg' FROM (VALUES ` + values + `) AS w(v)) x`
	if n := c.count(t, q); n != 0 || c.count(t, `SELECT count(*) FROM `+c.dst+`_named`) != len(want) {
		t.Fatalf("%d rows of the named columns are not the records' fields", n)
	}
	// A field that is not of its column's type fails the load, which leaves nothing.
	bad := append(slices.Clone(args), "--columns", "msg:bigint")
	bad[slices.Index(bad, c.dst)] = c.dst + "_bad"
	r = wharf(t, bad...)
	if r.code != 1 || !strings.Contains(r.err, "WHARF_LOAD_TARGET_FAILED") || !strings.Contains(r.err, "bigint") {
		t.Fatalf("a text field loaded as bigint: exit %d, %s", r.code, r.err)
	}
	if n := c.count(t, `SELECT count(*) FROM pg_class WHERE relname = '`+c.dst+`_bad'`); n != 0 {
		t.Fatal("a failed load left its table behind")
	}
	r = wharf(t, append(slices.Clone(args), "--columns", "bad name")...)
	if r.code != 2 || !strings.Contains(r.err, "--columns") {
		t.Fatalf("a column that is no name: exit %d, %s", r.code, r.err)
	}
}

// TestE2ERepairThenLoadPostgres: a PostgreSQL source changed in one chunk after its export
// reconciles to that chunk; repair --execute re-exports it, a reconcile then matches, and a
// load of the repaired run holds exactly the source's rows.
func TestE2ERepairThenLoadPostgres(t *testing.T) {
	c := newLoadCase(t, "")
	run := c.export(t)
	c.exec(t, `DELETE FROM `+c.src+` WHERE id = 150`, `UPDATE `+c.src+` SET name = 'repaired', amount = 0 WHERE id = 160`,
		`INSERT INTO `+c.src+` (id, name) VALUES (150, 'back')`)
	rep := decodeReconcile(t, wharf(t, "reconcile", "-c", c.cfg, "--run-id", run, "--format", "json").must(t, 1))
	if got, _ := statuses(rep); strings.Count(strings.Join(got, " "), "mismatch") != 1 || got[1] != "mismatch" {
		t.Fatalf("after the source changed in chunk 1: %v", got)
	}
	done := decodePlan(t, wharf(t, "repair", "-c", c.cfg, "--run-id", run, "--execute", "--format", "json").must(t, 0))
	if !done.Executed || len(done.Chunks) != 1 {
		t.Fatalf("the repair: %+v", done)
	}
	wharf(t, "reconcile", "-c", c.cfg, "--run-id", run).must(t, 0)
	c.load(t, 0, "--run-id", run)
	c.same(t)
}
