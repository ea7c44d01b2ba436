package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/testenv"
)

// pgRows is how many rows pgMixedTable holds: 1..pgRows with values, then one row of NULLs.
const pgRows = 300

// pgMixedTable creates a fresh table of every type the export maps, with NULLs in every
// column of one row, and returns its name.
func pgMixedTable(t *testing.T, srv testenv.PostgresServer) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(srv.URL)
	must(t, err)
	cfg.Password = srv.Password
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	name := "wharf_e2e_" + strings.ToLower(strings.NewReplacer("/", "_", "#", "_").Replace(t.Name()))
	for _, q := range []string{
		`DROP TABLE IF EXISTS ` + name,
		`CREATE TABLE ` + name + ` (id bigint, small smallint, i int, f4 real, f8 double precision,
  amount numeric(12,3), name text, raw bytea, ok boolean, d date, ts timestamp, tz timestamptz,
  u uuid, j json)`,
		fmt.Sprintf(`INSERT INTO %s SELECT g, g %% 100, g * 2, g / 3.0, g / 7.0, g * 1.125, 'row ' || g,
  decode(lpad(to_hex(g), 8, '0'), 'hex'), g %% 2 = 0, date '2024-01-01' + g,
  timestamp '2024-01-01 00:00:00' + g * interval '1 minute',
  timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second', md5(g::text)::uuid,
  json_build_object('g', g) FROM generate_series(1, %d) g`, name, pgRows),
		fmt.Sprintf(`INSERT INTO %s (id) VALUES (%d)`, name, pgRows+1),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return name
}

// pgConfig writes a wharf.yaml exporting table from source (password read from pwFile) to
// ./out/{export}/, and returns its path.
func pgConfig(t *testing.T, dir, source, pwFile, table string) string {
	t.Helper()
	cfg := filepath.Join(dir, "wharf.yaml")
	body := fmt.Sprintf(`state: .wharf/state.db
exports:
  - name: pg
    source: %s
    password: file://%s
    table: %s
    chunk_key: id
    chunk_rows: 100
    destination: ./out/{export}/
`, source, pwFile, table)
	must(t, os.WriteFile(cfg, []byte(body), 0o644))
	return cfg
}

// treeSnapshot maps every file under dir to its content.
func treeSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	must(t, err)
	return out
}

// runRecords decodes `wharf runs --format json`.
func runRecords(t *testing.T, cfg string) []export.RunRecord {
	t.Helper()
	r := wharf(t, "runs", "-c", cfg, "--format", "json").must(t, 0)
	var recs []export.RunRecord
	sc := bufio.NewScanner(strings.NewReader(r.out))
	for sc.Scan() {
		var rec export.RunRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("runs line %q: %v", sc.Text(), err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// TestE2EExportPostgres exports a table of mixed types from PostgreSQL to the file store and
// validates it; then runs with a wrong password and against a source nothing listens on, and
// checks each fails before any write, leaves the dataset certified, is journaled, names the
// host and never the planted password.
func TestE2EExportPostgres(t *testing.T) {
	srv := testenv.Postgres(t)
	if srv.Password == "" {
		t.Skip("the server uses trust authentication: a wrong password is not refused")
	}
	table := pgMixedTable(t, srv)
	dir := t.TempDir()
	pwFile := filepath.Join(t.TempDir(), "pg-password")
	must(t, os.WriteFile(pwFile, []byte(srv.Password+"\n"), 0o600))
	cfg := pgConfig(t, dir, srv.URL, pwFile, table)

	run := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json", "--validate", "--parallel", "2").must(t, 0))
	if run.Validation == nil || !run.Validation.Certified || run.Rows != pgRows+1 || len(run.Parts) != 4 {
		t.Fatalf("export: rows %d parts %d validation %+v", run.Rows, len(run.Parts), run.Validation)
	}
	if ids := sortedIDs(t, run.Prefix, run.Parts); !isRange(ids, 1, pgRows+1) {
		t.Errorf("read back %d ids, want exactly 1..%d", len(ids), pgRows+1)
	}
	v := decodeValidation(t, wharf(t, "validate", "-c", cfg, "--format", "json", "--deep").must(t, 0))
	if !v.Certified || v.Rows != pgRows+1 || v.RunID != run.RunID {
		t.Fatalf("validate --deep: %+v", v)
	}
	manifest := readFile(t, filepath.Join(run.Prefix, dataset.ManifestKey))
	var m dataset.Manifest
	must(t, json.Unmarshal([]byte(manifest), &m))
	want := map[string]string{"small": "int16", "f4": "float32", "amount": "decimal(12, 3)", "raw": "binary",
		"ok": "bool", "d": "date32", "ts": "timestamp[us]", "tz": "timestamp[us, tz=UTC]"}
	for _, c := range m.Schema {
		if w, ok := want[c.Name]; ok && c.Type != w {
			t.Errorf("column %s maps to %s, want %s", c.Name, c.Type, w)
		}
		delete(want, c.Name)
	}
	if len(want) != 0 || strings.Contains(manifest, srv.Password) {
		t.Errorf("the manifest lacks columns %v (or holds the password)", want)
	}

	u, err := url.Parse(srv.URL)
	must(t, err)
	host := u.Host
	t.Run("wrong password", func(t *testing.T) {
		const planted = "planted-Wrong-Pw-5309"
		must(t, os.WriteFile(pwFile, []byte(planted+"\n"), 0o600))
		defer os.WriteFile(pwFile, []byte(srv.Password+"\n"), 0o600)
		failsBeforeAnyWrite(t, dir, cfg, host, planted)
	})
	t.Run("unreachable source", func(t *testing.T) {
		const planted = "planted-Unreachable-Pw-8086"
		unreachable := fmt.Sprintf("127.0.0.1:%d", testenv.FreeLoopbackPort(t))
		pw := filepath.Join(t.TempDir(), "pw")
		must(t, os.WriteFile(pw, []byte(planted+"\n"), 0o600))
		cfg := pgConfig(t, dir, strings.Replace(srv.URL, host, unreachable, 1), pw, table)
		failsBeforeAnyWrite(t, dir, cfg, unreachable, planted)
	})
}

// failsBeforeAnyWrite runs the export of cfg (in dir, over a certified dataset), expects
// WHARF_SOURCE_UNAVAILABLE naming host, and checks nothing under dir changed but the state
// file, the journal lists one more run, failed and naming host, and planted appears nowhere.
func failsBeforeAnyWrite(t *testing.T, dir, cfg, host, planted string) {
	t.Helper()
	out := filepath.Join(dir, "out")
	before := treeSnapshot(t, out)
	known := map[string]bool{}
	for _, rec := range runRecords(t, cfg) {
		known[rec.RunID] = true
	}
	r := wharf(t, "export", "-c", cfg, "--parallel", "2").must(t, 1)
	if !strings.Contains(r.err, "WHARF_SOURCE_UNAVAILABLE") || !strings.Contains(r.err, host) {
		t.Errorf("stderr %q does not name the code and %s", r.err, host)
	}
	// One line, without pgx's tab-indented line per attempt or the TLS attempt's refusal.
	if strings.Count(strings.TrimSuffix(r.err, "\n"), "\n") != 0 || strings.Contains(r.err, "\t") || strings.Contains(r.err, "tls error") {
		t.Errorf("stderr is not one line: %q", r.err)
	}
	if after := treeSnapshot(t, out); !maps.Equal(before, after) {
		t.Errorf("the failed run changed the dataset: %d files before, %d after", len(before), len(after))
	}
	v := decodeValidation(t, wharf(t, "validate", "-c", cfg, "--format", "json", "--deep").must(t, 0))
	if !v.Certified {
		t.Errorf("the previous dataset is no longer certified: %+v", v)
	}
	var added []export.RunRecord
	for _, rec := range runRecords(t, cfg) {
		if !known[rec.RunID] {
			added = append(added, rec)
		}
	}
	if len(added) != 1 || added[0].Status != dataset.StatusFailed || !strings.Contains(added[0].Error, host) ||
		added[0].Parts != 0 {
		t.Errorf("runs: the failed run is not listed as failed naming %s with no parts: %+v", host, added)
	}
	pretty := wharf(t, "runs", "-c", cfg).must(t, 0)
	scanned := map[string]string{"stdout": r.out + pretty.out, "stderr": r.err}
	for p, content := range treeSnapshot(t, dir) { // the state DB (and any -wal), every output file
		scanned[p] = content
	}
	if _, ok := scanned[filepath.Join(dir, ".wharf", "state.db")]; !ok || len(scanned) < len(before)+3 {
		t.Fatalf("the scan misses the state file or the dataset: %d places", len(scanned))
	}
	for where, content := range scanned {
		if strings.Contains(content, planted) {
			t.Errorf("%s holds the planted password", where)
		}
	}
}
