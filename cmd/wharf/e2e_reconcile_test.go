package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/reconcile"
)

func decodeReconcile(t *testing.T, r result) reconcile.Report {
	t.Helper()
	return decodeOutput[reconcile.Report](t, "reconcile", r)
}

// statuses returns each chunk's status, in chunk order, and each chunk's differing figures.
func statuses(rep reconcile.Report) ([]string, map[int][]string) {
	var got []string
	figs := map[int][]string{}
	for _, c := range rep.Chunks {
		got = append(got, c.Status)
		for _, d := range c.Differences {
			figs[c.Chunk] = append(figs[c.Chunk], d.Figure)
		}
	}
	return got, figs
}

// TestE2EReconcileSQLite: a certified export of the quickstart reconciles to four matching
// chunks; a row deleted from one chunk, a value nulled in another and a row inserted in a
// third make exactly those three chunks mismatch, each naming its figure; a part deleted
// from the prefix makes its chunk unknown.
func TestE2EReconcileSQLite(t *testing.T) {
	cfg := quickstart(t)
	dir := filepath.Dir(cfg)
	src := filepath.Join(dir, "quickstart.db")
	exec := func(qs ...string) { t.Helper(); execSQLite(t, src, qs...) }
	wharf(t, "export", "-c", cfg).must(t, 0)
	r := wharf(t, "reconcile", "-c", cfg).must(t, 0)
	for _, want := range []string{"chunks:", "4: 4 match, 0 mismatch, 0 unknown", "CHUNK", "not compared:"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("reconcile output lacks %q:\n%s", want, r.out)
		}
	}
	// A run without id 600, so that inserting it later lands inside chunk 2's range.
	exec(`DELETE FROM orders WHERE id = 600`)
	wharf(t, "export", "-c", cfg).must(t, 0)
	rep := decodeReconcile(t, wharf(t, "reconcile", "-c", cfg, "--format", "json").must(t, 0))
	if got, _ := statuses(rep); !slices.Equal(got, []string{"match", "match", "match", "match"}) || rep.Matched != 4 || rep.Mode != "full" {
		t.Fatalf("after the second run: %v %+v", got, rep)
	}

	exec(`DELETE FROM orders WHERE id = 1`, `UPDATE orders SET note = NULL WHERE id = 300`,
		`INSERT INTO orders VALUES (600, 'acme', '1.00', '2024-01-05 09:00:00', 1, NULL)`,
		`UPDATE orders SET customer = 'zeta', amount = '0.01' WHERE id = 800`)
	r = wharf(t, "reconcile", "-c", cfg, "--format", "json")
	r.must(t, 1)
	if !strings.Contains(r.err, "WHARF_RECONCILE_MISMATCH") {
		t.Errorf("stderr %q lacks WHARF_RECONCILE_MISMATCH", r.err)
	}
	rep = decodeReconcile(t, r)
	got, figs := statuses(rep)
	if !slices.Equal(got, []string{"mismatch", "mismatch", "mismatch", "mismatch"}) || rep.Mismatched != 4 {
		t.Fatalf("after the source changed: %v", got)
	}
	if !slices.Equal(figs[3], []string{"column customer max", "column amount min"}) {
		t.Errorf("chunk 3 differs in %v, want its text column's max and its decimal column's min", figs[3])
	}
	for _, d := range rep.Chunks[3].Differences {
		if d.SourceValue == nil || d.PartValue == nil || d.Source != nil {
			t.Errorf("a difference of text or decimal values: %+v", d)
		} else if v := *d.SourceValue + " " + *d.PartValue; v != "zeta umbrella" && v != "0.01 10.00" {
			t.Errorf("%s: source %s, part %s", d.Figure, *d.SourceValue, *d.PartValue)
		}
	}
	for chunk, want := range map[int][]string{0: {"rows", "column id min"}, 1: {"column note non-null"}, 2: {"rows", "column id non-null"}} {
		for _, w := range want {
			if !slices.Contains(figs[chunk], w) {
				t.Errorf("chunk %d differs in %v, want %q among them", chunk, figs[chunk], w)
			}
		}
	}
	if !slices.Equal(figs[1], []string{"column note non-null"}) {
		t.Errorf("chunk 1 differs in %v, want only its note's non-null count", figs[1])
	}
	r = wharf(t, "reconcile", "-c", cfg).must(t, 1)
	for _, want := range []string{"4 mismatch", "rows: source 249, part 250", "column note non-null: source", `column customer max: source "zeta", part "umbrella"`, "expected cause of a mismatch"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("reconcile text lacks %q:\n%s", want, r.out)
		}
	}

	must(t, os.Remove(filepath.Join(rep.Prefix, rep.Chunks[3].Part)))
	rep = decodeReconcile(t, wharf(t, "reconcile", "-c", cfg, "--format", "json").must(t, 1))
	if c := rep.Chunks[3]; c.Status != "unknown" || !strings.Contains(c.Reason, "part_missing") || rep.Unknown != 1 {
		t.Errorf("chunk 3 after its part was deleted: %+v", c)
	}
}

// TestE2EReconcileJSONSchema: the keys of --format json, the stable schema docs/export.md
// documents.
func TestE2EReconcileJSONSchema(t *testing.T) {
	cfg := quickstart(t)
	wharf(t, "export", "-c", cfg).must(t, 0)
	var top map[string]json.RawMessage
	must(t, json.Unmarshal([]byte(wharf(t, "reconcile", "-c", cfg, "--format", "json").must(t, 0).out), &top))
	for _, k := range []string{"prefix", "export", "run_id", "mode", "consistency", "matched", "mismatched", "unknown", "chunks"} {
		if _, ok := top[k]; !ok {
			t.Errorf("reconcile JSON lacks %q: %v", k, top)
		}
	}
	var chunks []map[string]json.RawMessage
	must(t, json.Unmarshal(top["chunks"], &chunks))
	if len(chunks) != 4 {
		t.Fatalf("%d chunks, want 4", len(chunks))
	}
	for _, k := range []string{"chunk", "part", "status", "source_rows", "part_rows", "differences", "not_compared"} {
		if _, ok := chunks[0][k]; !ok {
			t.Errorf("a chunk lacks %q: %v", k, chunks[0])
		}
	}
	wharf(t, "reconcile", "-c", cfg, "extra").must(t, 2)
	wharf(t, "reconcile", "-c", cfg, "--date", "yesterday").must(t, 2)
}

// TestE2EReconcileRefused: an export whose definition changed since the run, and a prefix
// that is not certified, are refused by name before the source is queried.
func TestE2EReconcileRefused(t *testing.T) {
	cfg := quickstart(t)
	wharf(t, "export", "-c", cfg).must(t, 0)
	changed := filepath.Join(filepath.Dir(cfg), "changed.yaml")
	must(t, os.WriteFile(changed, []byte(strings.Replace(readFile(t, cfg), "format: parquet", "format: csv", 1)), 0o644))
	r := wharf(t, "reconcile", "-c", changed).must(t, 1)
	if !strings.Contains(r.err, "WHARF_RECONCILE_REFUSED") || !strings.Contains(r.err, "definition") {
		t.Errorf("a changed definition: %q", r.err)
	}
	var top map[string]json.RawMessage
	must(t, json.Unmarshal([]byte(wharf(t, "reconcile", "-c", cfg, "--format", "json").must(t, 0).out), &top))
	var prefix string
	must(t, json.Unmarshal(top["prefix"], &prefix))
	must(t, os.Remove(filepath.Join(prefix, "_SUCCESS")))
	r = wharf(t, "reconcile", "-c", cfg).must(t, 1)
	if !strings.Contains(r.err, "WHARF_RECONCILE_REFUSED") || !strings.Contains(r.err, "success_missing") || r.out != "" {
		t.Errorf("a prefix without _SUCCESS: out %q, err %q", r.out, r.err)
	}
}

// TestE2EReconcilePostgres: every type the export maps reconciles to matching chunks, with
// the min and max of its integers, floats, decimals, text, dates and timestamps compared; a
// value changed in one chunk makes exactly that chunk mismatch in its column's max, a
// timestamp moved by one microsecond and a date made infinite in another make it mismatch
// in the timestamp's min and the date's min and max (an infinite extreme is no value); a
// float's max, a decimal's min and a text's max (in byte order) changed in a third are named
// with their values; a NaN is named as not compared.
func TestE2EReconcilePostgres(t *testing.T) {
	srv := testenv.Postgres(t)
	table := pgMixedTable(t, srv)
	dir := t.TempDir()
	pwFile := filepath.Join(t.TempDir(), "pg-password")
	must(t, os.WriteFile(pwFile, []byte(srv.Password+"\n"), 0o600))
	cfg := pgConfig(t, dir, srv.URL, pwFile, table)
	wharf(t, "export", "-c", cfg).must(t, 0)
	rep := decodeReconcile(t, wharf(t, "reconcile", "-c", cfg, "--format", "json").must(t, 0))
	if got, _ := statuses(rep); !slices.Equal(got, []string{"match", "match", "match", "match"}) {
		t.Fatalf("reconcile of a fresh export: %v %+v", got, rep)
	}
	pc, err := pgx.ParseConfig(srv.URL)
	must(t, err)
	pc.Password = srv.Password
	db := stdlib.OpenDB(*pc)
	defer db.Close()
	for _, c := range rep.Chunks[0].NotCompared {
		for _, col := range []string{"column id ", "column small ", "column i ", "column f4 ", "column f8 ", "column amount ", "column name ",
			"column d ", "column ts ", "column tz "} {
			if strings.HasPrefix(c, col) {
				t.Errorf("%q: its min and max compare exactly", c)
			}
		}
	}
	if _, err := db.Exec(`UPDATE ` + table + ` SET i = 1000000 WHERE id = 150`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE ` + table + ` SET ts = ts - interval '1 microsecond', d = 'infinity' WHERE id = 201`); err != nil {
		t.Fatal(err)
	}
	// Chunk 0: a float's max, a decimal's min and a text's max (in byte order: 'row 99' was
	// its max), each with the same counts.
	if _, err := db.Exec(`UPDATE ` + table + ` SET f8 = 1e9 WHERE id = 20; UPDATE ` + table + ` SET amount = -5 WHERE id = 10;
UPDATE ` + table + ` SET name = 'row 9a' WHERE id = 50; UPDATE ` + table + ` SET f8 = 'NaN' WHERE id = 250`); err != nil {
		t.Fatal(err)
	}
	rep = decodeReconcile(t, wharf(t, "reconcile", "-c", cfg, "--format", "json").must(t, 1))
	got, figs := statuses(rep)
	if !slices.Equal(got, []string{"mismatch", "mismatch", "mismatch", "match"}) || !slices.Equal(figs[1], []string{"column i max"}) ||
		!slices.Equal(figs[2], []string{"column d min", "column d max", "column ts min"}) ||
		!slices.Equal(figs[0], []string{"column f8 max", "column amount min", "column name max"}) {
		t.Errorf("after values changed in chunks 0, 1 and 2: %v %v", got, figs)
	}
	if !slices.ContainsFunc(rep.Chunks[2].NotCompared, func(s string) bool { return strings.HasPrefix(s, "column f8 min, max: the source holds NaN") }) {
		t.Errorf("a NaN in chunk 2's f8 is not named as not compared: %v", rep.Chunks[2].NotCompared)
	}
	var values []string
	for _, d := range rep.Chunks[0].Differences {
		if d.SourceValue != nil && d.PartValue != nil {
			values = append(values, *d.SourceValue+" "+*d.PartValue)
		}
	}
	if !slices.Equal(values, []string{"1e+09 14.285714285714286", "-5.000 1.125", "row 9a row 99"}) {
		t.Errorf("chunk 0's differing values (source, part): %q", values)
	}
}

// TestE2EReconcileDelta: a delta run is reconciled within its cursor window, which the
// output names: rows changed outside the window do not touch it, a row deleted within it is a
// mismatch of its chunk; --run-id picks the earlier run, whose window still matches.
func TestE2EReconcileDelta(t *testing.T) {
	cfg := quickstart(t, "    mode: full                  # or: delta, with cursor_column", "    mode: delta\n    cursor_column: id",
		"./out/{export}/{date}/", "./out/{export}/{run_id}/")
	src := filepath.Join(filepath.Dir(cfg), "quickstart.db")
	exec := func(qs ...string) { t.Helper(); execSQLite(t, src, qs...) }
	first := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json").must(t, 0))
	exec(`INSERT INTO orders SELECT id + 1000, customer, amount, placed_at, shipped, note FROM orders WHERE id <= 100`)
	second := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json").must(t, 0))
	if second.Rows != 100 {
		t.Fatalf("the second delta run exported %d rows, want 100", second.Rows)
	}
	r := wharf(t, "reconcile", "-c", cfg).must(t, 0)
	if !strings.Contains(r.out, "window:      id > 1000 and <= 1100") || !strings.Contains(r.out, "1: 1 match") {
		t.Errorf("reconcile of the second run:\n%s", r.out)
	}
	exec(`DELETE FROM orders WHERE id = 5`)
	rep := decodeReconcile(t, wharf(t, "reconcile", "-c", cfg, "--format", "json").must(t, 0))
	if rep.RunID != second.RunID || rep.Mode != "delta" || rep.Cursor == nil || rep.Matched != 1 {
		t.Errorf("a row deleted outside the window: %+v", rep)
	}
	rep = decodeReconcile(t, wharf(t, "reconcile", "-c", cfg, "--run-id", first.RunID, "--format", "json").must(t, 1))
	if got, figs := statuses(rep); !slices.Equal(got, []string{"mismatch", "match", "match", "match"}) || !slices.Contains(figs[0], "rows") {
		t.Errorf("the first run after id 5 was deleted: %v %v", got, figs)
	}
	exec(`DELETE FROM orders WHERE id = 1050`)
	rep = decodeReconcile(t, wharf(t, "reconcile", "-c", cfg, "--format", "json").must(t, 1))
	if got, figs := statuses(rep); !slices.Equal(got, []string{"mismatch"}) || !slices.Contains(figs[0], "rows") {
		t.Errorf("a row deleted within the window: %v %v", got, figs)
	}
}

// execSQLite runs qs, in order, on the SQLite database at path.
func execSQLite(t *testing.T, path string, qs ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	must(t, err)
	defer db.Close()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
