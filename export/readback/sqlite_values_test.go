package readback

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
)

// sqliteSource creates a SQLite database from statements and returns its path.
func sqliteSource(t *testing.T, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return path
}

// exportAndRead exports e, validates the prefix --deep, and returns a DuckDB connection and
// the read_parquet(...) of exactly the manifest's parts.
func exportAndRead(t *testing.T, e export.Export) (*sql.DB, string, *export.Result) {
	t.Helper()
	ctx := context.Background()
	e.Destination = filepath.Join(t.TempDir(), "out") + "/"
	res, err := export.Run(ctx, e, export.Options{StatePath: filepath.Join(t.TempDir(), "state.db"), Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	v, err := dataset.ValidateURL(ctx, res.Prefix, &e.Store, true)
	if err != nil || !v.Certified {
		t.Fatalf("validate --deep: %v %+v", err, v)
	}
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { duck.Close() })
	files := make([]string, len(res.Parts))
	for i, p := range res.Parts {
		files[i] = "'" + filepath.Join(e.Destination, p.Key) + "'"
	}
	return duck, "read_parquet([" + strings.Join(files, ", ") + "])", res
}

// TestDuckDBReadsExactSQLiteValues: the values SQLite holds in typed columns are written
// exactly and read back so by DuckDB: numbers in timestamp columns in the unit stated per
// column, ISO-8601 text with and without zones, a date given with a midnight time, decimals
// without rounding, wide and bare decimals as exact text (never a float), booleans, and a
// REAL in an untyped column as the shortest text that reads back as it. (Text that looks like
// a number in a DECIMAL column is a REAL once SQLite has stored it: '00012.50' is 12.5.)
func TestDuckDBReadsExactSQLiteValues(t *testing.T) {
	src := sqliteSource(t, `CREATE TABLE v (id INTEGER PRIMARY KEY, ms TIMESTAMP, s DATETIME, iso TIMESTAMP,
  tz TIMESTAMPTZ, d DATE, dd DATE, dec DECIMAL(10,2), n NUMERIC(38,10), wide DECIMAL(50,2), bare DECIMAL,
  ok BOOLEAN, un)`,
		`INSERT INTO v VALUES (1, 1700000000000, 1700000000.5, '2024-01-31T12:34:56.123456Z',
  '2024-01-31 12:00:00+02:00', '2024-01-31 00:00:00', 19753, '12.34', 1e-10, 12345678901234567, 9223372036854775807,
  1, 1000000.0)`,
		`INSERT INTO v VALUES (2, -1, -0.25, '1969-12-31 23:59:59.999999', '2024-06-30T23:00:00-01:30', '0001-01-01', -1,
  -0.5, '-0.0000000001', -1.5, '00012.50', 'true', 0.1)`,
		`INSERT INTO v (id, ok) VALUES (3, 0)`)
	e := export.Export{Name: "v", Source: "sqlite://" + src, Table: "v", ChunkKey: "id", ChunkRows: 1,
		TimeUnits: map[string]export.TimeUnit{"ms": export.UnitMillis, "s": export.UnitSeconds, "dd": export.UnitDays}}
	duck, from, _ := exportAndRead(t, e)
	rows, err := duck.Query(`SELECT CAST(ms AS VARCHAR), CAST(s AS VARCHAR), CAST(iso AS VARCHAR), CAST(epoch_us(tz) AS VARCHAR),
  CAST(d AS VARCHAR), CAST(dd AS VARCHAR), CAST("dec" AS VARCHAR), CAST(n AS VARCHAR), wide, bare, CAST(ok AS VARCHAR), un,
  typeof(wide), typeof(bare), typeof(n) FROM ` + from + ` ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := [][]string{
		{"2023-11-14 22:13:20", "2023-11-14 22:13:20.5", "2024-01-31 12:34:56.123456", "1706695200000000",
			"2024-01-31", "2024-01-31", "12.34", "0.0000000001", "12345678901234567", "9223372036854775807", "true", "1000000.0",
			"VARCHAR", "VARCHAR", "DECIMAL(38,10)"},
		{"1969-12-31 23:59:59.999", "1969-12-31 23:59:59.75", "1969-12-31 23:59:59.999999", "1719793800000000",
			"0001-01-01", "1969-12-31", "-0.50", "-0.0000000001", "-1.5", "12.5", "true", "0.1",
			"VARCHAR", "VARCHAR", "DECIMAL(38,10)"},
		{"NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "false", "NULL",
			"VARCHAR", "VARCHAR", "DECIMAL(38,10)"},
	}
	for i := 0; rows.Next(); i++ {
		got := make([]sql.NullString, len(want[0]))
		dest := make([]any, len(got))
		for j := range got {
			dest[j] = &got[j]
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		for j, g := range got {
			s := "NULL"
			if g.Valid {
				s = g.String
			}
			if i < len(want) && s != want[i][j] {
				t.Errorf("row %d column %d: DuckDB reads %q, want %q", i+1, j+1, s, want[i][j])
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestDuckDBReadsTextNotUTF8AsBinary: with invalid_utf8: binary, a text column holding bytes
// that are not UTF-8 (in one chunk of three) is written as binary in every part of the run,
// byte for byte, and DuckDB reads every part; the other text column stays text.
func TestDuckDBReadsTextNotUTF8AsBinary(t *testing.T) {
	src := sqliteSource(t, `CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT, name TEXT)`,
		`INSERT INTO u VALUES (1, 'plain', 'a'), (2, x'deadbeef', 'b'), (3, 'é', 'c')`)
	e := export.Export{Name: "u", Source: "sqlite://" + src, Table: "u", ChunkKey: "id", ChunkRows: 1,
		InvalidUTF8: export.UTF8Binary}
	duck, from, res := exportAndRead(t, e)
	if len(res.Parts) != 3 {
		t.Fatalf("%d parts, want 3", len(res.Parts))
	}
	var hexes, types, names string
	err := duck.QueryRow(`SELECT string_agg(hex(v), ',' ORDER BY id), string_agg(DISTINCT typeof(v), ','),
  string_agg(name || ':' || typeof(name), ',' ORDER BY id) FROM `+from).Scan(&hexes, &types, &names)
	if err != nil {
		t.Fatal(err)
	}
	if hexes != "706C61696E,DEADBEEF,C3A9" || types != "BLOB" || names != "a:VARCHAR,b:VARCHAR,c:VARCHAR" {
		t.Errorf("DuckDB reads %s as %s, names %s", hexes, types, names)
	}
}
