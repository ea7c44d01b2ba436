package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
)

// pgInfinityTable creates a table with ±infinity in a date and a timestamp column (row 1)
// beside finite values (row 2), and returns its name.
func pgInfinityTable(t *testing.T, srv testenv.PostgresServer) string {
	t.Helper()
	db := srv.DB(t, "")
	name := "wharf_e2e_inf_" + strings.ToLower(t.Name())
	for _, q := range []string{"DROP TABLE IF EXISTS " + name,
		"CREATE TABLE " + name + " (id bigint, d date, ts timestamp)",
		"INSERT INTO " + name + " VALUES (1, 'infinity', '-infinity'), (2, '2024-01-31', '2024-01-31 12:34:56')"} {
		_, err := db.Exec(q)
		must(t, err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + name) })
	return name
}

// pgNDJSONConfig writes a wharf.yaml exporting what relation says ("table: t" or a query:
// block) from srv as NDJSON to ./out/, with the extra lines, and returns its path.
func pgNDJSONConfig(t *testing.T, srv testenv.PostgresServer, relation, extra string) string {
	t.Helper()
	dir := t.TempDir()
	pw := ""
	if ref := srv.PasswordRef(t); ref != "" {
		pw = "\n    password: " + ref
	}
	writeFiles(t, dir, map[string]string{"wharf.yaml": fmt.Sprintf(`exports:
  - name: pg
    source: %s%s
    %s
    chunk_key: id
    format: ndjson
    destination: ./out/
%s`, srv.URL, pw, relation, extra)})
	return filepath.Join(dir, "wharf.yaml")
}

// TestE2EExportInfinityNullPostgres: infinity: null, as docs/export.md writes it, writes
// NULL for ±infinity (YAML reads a bare null as no value: it must still mean the word).
func TestE2EExportInfinityNullPostgres(t *testing.T) {
	srv := testenv.Postgres(t)
	table := pgInfinityTable(t, srv)
	for _, spelling := range []string{"null", "NULL", `"null"`} {
		cfg := pgNDJSONConfig(t, srv, "table: "+table, "    infinity: "+spelling+"\n")
		run := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json").must(t, 0))
		body := readFile(t, filepath.Join(run.Prefix, run.Parts[0].Key))
		if !strings.Contains(body, `{"id":1,"d":null,"ts":null}`) || !strings.Contains(body, `{"id":2,"d":"2024-01-31",`) {
			t.Errorf("infinity: %s wrote:\n%s", spelling, body)
		}
	}
	// Left out, it is refuse: the run stops naming the value.
	r := wharf(t, "export", "-c", pgNDJSONConfig(t, srv, "table: "+table, "")).must(t, 1)
	if !strings.Contains(r.err, "WHARF_EXPORT_VALUE_REFUSED") || !strings.Contains(r.err, "infinity") {
		t.Errorf("the default: stderr %q", r.err)
	}
}

// TestE2EExportQueryEndingInCommentPostgres: a query: whose last line is a -- comment exports
// from PostgreSQL too.
func TestE2EExportQueryEndingInCommentPostgres(t *testing.T) {
	srv := testenv.Postgres(t)
	table := pgInfinityTable(t, srv)
	cfg := pgNDJSONConfig(t, srv, "query: |\n      SELECT id, d FROM "+table+"\n      WHERE id = 2 -- finite rows only", "")
	run := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json").must(t, 0))
	if body := readFile(t, filepath.Join(run.Prefix, run.Parts[0].Key)); run.Rows != 1 || body != `{"id":2,"d":"2024-01-31"}`+"\n" {
		t.Errorf("rows %d:\n%s", run.Rows, body)
	}
}
