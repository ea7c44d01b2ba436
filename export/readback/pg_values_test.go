package readback

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/testenv"
)

// pgTable creates a fresh table named after the test in the server's database db ("" for the
// default one) and returns its name.
func pgTable(t *testing.T, srv testenv.PostgresServer, db, create string, inserts ...string) string {
	t.Helper()
	c := srv.DB(t, db)
	name := "wharf_rb_" + strings.ToLower(strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	for _, q := range append([]string{`DROP TABLE IF EXISTS {t}`, create}, inserts...) {
		if _, err := c.Exec(strings.ReplaceAll(q, "{t}", name)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return name
}

// queryStrings runs q and returns its one row's columns as text ("NULL" for NULL).
func queryStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	got := make([]sql.NullString, len(cols))
	dest := make([]any, len(got))
	for i := range got {
		dest[i] = &got[i]
	}
	if !rows.Next() {
		t.Fatalf("%s: no row (%v)", q, rows.Err())
	}
	if err := rows.Scan(dest...); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(got))
	for i, g := range got {
		out[i] = "NULL"
		if g.Valid {
			out[i] = g.String
		}
	}
	return out
}

// TestDuckDBReadsPostgresInfinity: with infinity: clamp, PostgreSQL's ±infinity in date,
// timestamp and timestamptz columns are the types' extreme values, which DuckDB reads back as
// infinity and -infinity; with infinity: null they are NULL. The last finite microsecond
// timestamp before them is read back as itself.
func TestDuckDBReadsPostgresInfinity(t *testing.T) {
	srv := testenv.Postgres(t)
	table := pgTable(t, srv, "", `CREATE TABLE {t} (id int, d date, ts timestamp, tz timestamptz)`,
		`INSERT INTO {t} VALUES (1, 'infinity', 'infinity', '-infinity'), (2, '-infinity', '-infinity', 'infinity'),
  (3, '2024-01-31', '294247-01-10 04:00:54.775806', '4713-01-01 00:00:00+00 BC')`)
	for policy, want := range map[export.InfinityPolicy]string{
		export.InfinityClamp: "infinity,infinity,-infinity|-infinity,-infinity,infinity|2024-01-31,294247-01-10 04:00:54.775806,4713-01-01 (BC) 00:00:00+00",
		export.InfinityNull:  "NULL,NULL,NULL|NULL,NULL,NULL|2024-01-31,294247-01-10 04:00:54.775806,4713-01-01 (BC) 00:00:00+00",
	} {
		e := export.Export{Name: "inf", Source: srv.URL, Password: srv.PasswordRef(t), Table: table, ChunkKey: "id", Infinity: policy}
		duck, from, _ := exportAndRead(t, e)
		if _, err := duck.Exec("SET TimeZone = 'UTC'"); err != nil {
			t.Fatal(err)
		}
		got := queryStrings(t, duck, `SELECT string_agg(concat_ws(',', coalesce(CAST(d AS VARCHAR), 'NULL'),
  coalesce(CAST(ts AS VARCHAR), 'NULL'), coalesce(CAST(tz AS VARCHAR), 'NULL')), '|' ORDER BY id) FROM `+from)
		if got[0] != want {
			t.Errorf("infinity: %s: DuckDB reads\n%s\nwant\n%s", policy, got[0], want)
		}
	}
}

// TestDuckDBReadsSQLASCIIBytes: with invalid_utf8: binary, a SQL_ASCII database's text
// column holding bytes that are not UTF-8 is written as binary, byte for byte, and read so by
// DuckDB; its other text column stays text.
func TestDuckDBReadsSQLASCIIBytes(t *testing.T) {
	srv := testenv.Postgres(t)
	const dbname = "wharf_sql_ascii"
	admin := srv.DB(t, "")
	var n int
	if err := admin.QueryRow(`SELECT count(*) FROM pg_database WHERE datname = $1`, dbname).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		if _, err := admin.Exec(`CREATE DATABASE ` + dbname + ` ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`); err != nil {
			t.Fatal(err)
		}
	}
	table := pgTable(t, srv, dbname, `CREATE TABLE {t} (id int, v text, name text)`,
		`INSERT INTO {t} VALUES (1, 'plain', 'a'), (2, E'\xde\xad\xbe\xef', 'b'), (3, NULL, 'c')`)
	e := export.Export{Name: "ascii", Source: srv.URLFor(t, dbname), Password: srv.PasswordRef(t), Table: table,
		ChunkKey: "id", ChunkRows: 1, InvalidUTF8: export.UTF8Binary}
	duck, from, res := exportAndRead(t, e)
	if len(res.Parts) != 3 {
		t.Fatalf("%d parts, want 3", len(res.Parts))
	}
	got := queryStrings(t, duck, `SELECT string_agg(coalesce(hex(v), 'NULL'), ',' ORDER BY id), string_agg(DISTINCT typeof(v), ','),
  string_agg(name || ':' || typeof(name), ',' ORDER BY id) FROM `+from)
	if want := []string{"706C61696E,DEADBEEF,NULL", "BLOB", "a:VARCHAR,b:VARCHAR,c:VARCHAR"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("DuckDB reads %q, want %q", got, want)
	}
}
