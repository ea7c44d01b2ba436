package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/wharfdata/wharf/internal/testenv"
)

// csvRow is one row of the NULL-and-empty table: nil is NULL.
type csvRow struct {
	id   int64
	name *string
	raw  []byte // nil is NULL; []byte{} is empty
}

func str(s string) *string { return &s }

// csvRows are the values a CSV must keep apart: NULL, empty text and empty bytes, and text
// that needs quoting (a comma, a quote, a leading space, a line break, PostgreSQL's \.).
var csvRows = []csvRow{
	{1, nil, nil},
	{2, str(""), []byte{}},
	{3, str("a,b"), []byte{0x00, 0xff}},
	{4, str(" lead"), []byte("A")},
	{5, str(`say "hi"`), nil},
	{6, str(`\.`), []byte{}},
	{7, str("two\nlines"), []byte("\n")},
}

// sqlLiteral writes a csvRow's values as SQL literals; hex is how the dialect writes bytes.
func (r csvRow) sqlLiteral(hex func([]byte) string) string {
	name, raw := "NULL", "NULL"
	if r.name != nil {
		name = "'" + strings.ReplaceAll(*r.name, "'", "''") + "'"
	}
	if r.raw != nil {
		raw = hex(r.raw)
	}
	return fmt.Sprintf("(%d, %s, %s)", r.id, name, raw)
}

// csvExportConfig writes a wharf.yaml exporting table t of source as CSV to ./out/, one part.
func csvExportConfig(t *testing.T, source, password, table string) string {
	t.Helper()
	dir := t.TempDir()
	pw := ""
	if password != "" {
		pw = "\n    password: " + password
	}
	writeFiles(t, dir, map[string]string{"wharf.yaml": fmt.Sprintf(`exports:
  - name: nulls
    source: %s%s
    table: %s
    chunk_key: id
    format: csv
    destination: ./out/
`, source, pw, table)})
	return filepath.Join(dir, "wharf.yaml")
}

// exportCSV runs the export of cfg, validates it --deep, and returns its one part's bytes.
func exportCSV(t *testing.T, cfg string) []byte {
	t.Helper()
	run := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json").must(t, 0))
	if len(run.Parts) != 1 || run.Rows != int64(len(csvRows)) {
		t.Fatalf("export: %d parts, %d rows", len(run.Parts), run.Rows)
	}
	wharf(t, "validate", "--deep", run.Prefix).must(t, 0)
	b, err := os.ReadFile(filepath.Join(run.Prefix, run.Parts[0].Key))
	must(t, err)
	return b
}

// checkCSVLines checks the lines where NULL and empty values meet: NULL is an unquoted empty
// field, empty text and empty bytes are "".
func checkCSVLines(t *testing.T, csv []byte) {
	t.Helper()
	for _, want := range []string{"id,name,raw\n", "\n1,,\n", "\n2,\"\",\"\"\n", "\n5,\"say \"\"hi\"\"\",\n", "\n6,\"\\.\",\"\"\n"} {
		if !bytes.Contains(csv, []byte(want)) {
			t.Errorf("the CSV lacks %q:\n%s", want, csv)
		}
	}
}

// copyBack loads csv into a new table of db with PostgreSQL's own CSV reader (COPY … FORMAT
// csv, HEADER: an unquoted empty field is NULL, "" is the empty string), raw as its text,
// and returns the table's name.
func copyBack(t *testing.T, db *sql.DB, csv []byte) string {
	t.Helper()
	ctx := context.Background()
	name := "wharf_csv_back_" + strings.ToLower(strings.NewReplacer("/", "_", "#", "_").Replace(t.Name()))
	for _, q := range []string{"DROP TABLE IF EXISTS " + name, "CREATE TABLE " + name + " (id bigint, name text, raw text)"} {
		_, err := db.Exec(q)
		must(t, err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + name) })
	conn, err := db.Conn(ctx)
	must(t, err)
	defer conn.Close()
	must(t, conn.Raw(func(dc any) error {
		_, err := dc.(*stdlib.Conn).Conn().PgConn().CopyFrom(ctx, bytes.NewReader(csv), "COPY "+name+" FROM STDIN (FORMAT csv, HEADER true)")
		return err
	}))
	return name
}

// readBack reads the rows PostgreSQL loaded from the CSV, raw decoded from base64.
func readBack(t *testing.T, db *sql.DB, table string) map[int64]csvRow {
	t.Helper()
	rows, err := db.Query("SELECT id, name, decode(raw, 'base64') FROM " + table)
	must(t, err)
	defer rows.Close()
	out := map[int64]csvRow{}
	for rows.Next() {
		var r csvRow
		var name sql.NullString
		must(t, rows.Scan(&r.id, &name, &r.raw))
		if name.Valid {
			r.name = &name.String
		}
		if r.raw == nil {
			var isNull bool
			must(t, db.QueryRow("SELECT raw IS NULL FROM "+table+" WHERE id = $1", r.id).Scan(&isNull))
			if !isNull {
				r.raw = []byte{}
			}
		}
		out[r.id] = r
	}
	must(t, rows.Err())
	return out
}

func checkReadBack(t *testing.T, got map[int64]csvRow) {
	t.Helper()
	if len(got) != len(csvRows) {
		t.Fatalf("read back %d rows, want %d", len(got), len(csvRows))
	}
	for _, want := range csvRows {
		g := got[want.id]
		if (g.name == nil) != (want.name == nil) || g.name != nil && *g.name != *want.name {
			t.Errorf("row %d: name read back as %s, want %s", want.id, showText(g.name), showText(want.name))
		}
		if (g.raw == nil) != (want.raw == nil) || !bytes.Equal(g.raw, want.raw) {
			t.Errorf("row %d: raw read back as %s, want %s", want.id, showBytes(g.raw), showBytes(want.raw))
		}
	}
}

func showText(s *string) string {
	if s == nil {
		return "NULL"
	}
	return fmt.Sprintf("%q", *s)
}

func showBytes(b []byte) string {
	if b == nil {
		return "NULL"
	}
	return fmt.Sprintf("%x (%d bytes)", b, len(b))
}

// TestE2EExportCSVNullEmptySQLite exports NULL, empty text and empty bytes from SQLite as CSV
// and checks they stay apart: in the file's bytes, and read back by PostgreSQL's COPY.
func TestE2EExportCSVNullEmptySQLite(t *testing.T) {
	src := filepath.Join(t.TempDir(), "nulls.db")
	db, err := sql.Open("sqlite", "file:"+src)
	must(t, err)
	values := make([]string, len(csvRows))
	for i, r := range csvRows {
		values[i] = r.sqlLiteral(func(b []byte) string { return fmt.Sprintf("x'%x'", b) })
	}
	for _, q := range []string{"CREATE TABLE nulls (id INTEGER, name TEXT, raw BLOB)",
		"INSERT INTO nulls VALUES " + strings.Join(values, ", ")} {
		_, err := db.Exec(q)
		must(t, err)
	}
	var empties int
	must(t, db.QueryRow("SELECT count(*) FROM nulls WHERE typeof(raw) = 'blob' AND length(raw) = 0").Scan(&empties))
	must(t, db.Close())
	if empties != 2 {
		t.Fatalf("the source holds %d empty BLOBs, want 2", empties)
	}
	csv := exportCSV(t, csvExportConfig(t, "sqlite://"+src, "", "nulls"))
	checkCSVLines(t, csv)
	t.Run("read back by PostgreSQL", func(t *testing.T) {
		pg := testenv.Postgres(t).DB(t, "")
		checkReadBack(t, readBack(t, pg, copyBack(t, pg, csv)))
	})
}

// TestE2EExportCSVNullEmptyPostgres exports NULL, empty text and empty bytea from PostgreSQL
// as CSV, and loads it back with COPY: every value comes back as it was.
func TestE2EExportCSVNullEmptyPostgres(t *testing.T) {
	srv := testenv.Postgres(t)
	db := srv.DB(t, "")
	table := "wharf_e2e_" + strings.ToLower(t.Name())
	values := make([]string, len(csvRows))
	for i, r := range csvRows {
		values[i] = r.sqlLiteral(func(b []byte) string { return fmt.Sprintf("'\\x%x'::bytea", b) })
	}
	for _, q := range []string{"DROP TABLE IF EXISTS " + table,
		"CREATE TABLE " + table + " (id bigint, name text, raw bytea)",
		"INSERT INTO " + table + " VALUES " + strings.Join(values, ", ")} {
		_, err := db.Exec(q)
		must(t, err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + table) })
	csv := exportCSV(t, csvExportConfig(t, srv.URL, srv.PasswordRef(t), table))
	checkCSVLines(t, csv)
	back := copyBack(t, db, csv)
	var differ int
	must(t, db.QueryRow(`SELECT count(*) FROM `+table+` s FULL JOIN `+back+` b ON s.id = b.id
  WHERE s.id IS NULL OR b.id IS NULL OR s.name IS DISTINCT FROM b.name OR s.raw IS DISTINCT FROM decode(b.raw, 'base64')`).Scan(&differ))
	if differ != 0 {
		t.Errorf("%d row(s) read back from the CSV differ from the source", differ)
	}
	checkReadBack(t, readBack(t, db, back))
}

// TestE2EExportCSVSingleColumnNull exports a table of one column holding NULLs as CSV: each
// NULL is an empty line, and validate --deep counts it as the record it is.
func TestE2EExportCSVSingleColumnNull(t *testing.T) {
	src := filepath.Join(t.TempDir(), "one.db")
	db, err := sql.Open("sqlite", "file:"+src)
	must(t, err)
	for _, q := range []string{"CREATE TABLE one (id INTEGER)", "INSERT INTO one VALUES (1), (NULL), (3), (NULL)"} {
		_, err := db.Exec(q)
		must(t, err)
	}
	must(t, db.Close())
	cfg := csvExportConfig(t, "sqlite://"+src, "", "one")
	run := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json").must(t, 0))
	if run.Rows != 4 {
		t.Fatalf("export: %d rows, want 4", run.Rows)
	}
	wharf(t, "validate", "--deep", run.Prefix).must(t, 0)
	var all []byte
	for _, p := range run.Parts {
		b, err := os.ReadFile(filepath.Join(run.Prefix, p.Key))
		must(t, err)
		all = append(all, b...)
	}
	if !bytes.Contains(all, []byte("id\n\n\n")) {
		t.Errorf("the NULL chunk's part is not the header and two empty lines:\n%q", all)
	}
}
