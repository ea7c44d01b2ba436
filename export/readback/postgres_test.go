package readback

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/testenv"
)

// pgCheck is one figure computed on both sides: by PostgreSQL on the source table and by
// DuckDB on the exported parts, each rendered as text.
type pgCheck struct{ name, pg, duck string }

// pgChecks: the row count, then per column a sum or an ordered checksum and the NULL count.
var pgChecks = func() []pgCheck {
	checks := []pgCheck{{"rows", "count(*)::text", "CAST(count(*) AS VARCHAR)"}}
	for _, c := range []pgCheck{
		{"id", "sum(id)::text", "CAST(sum(id) AS VARCHAR)"},
		{"small", "sum(small)::text", "CAST(sum(small) AS VARCHAR)"},
		{"i", "sum(i)::text", "CAST(sum(i) AS VARCHAR)"},
		{"big", "sum(big)::text", "CAST(sum(big) AS VARCHAR)"},
		{"f4", "round(sum(f4::float8)::numeric, 4)::text", "printf('%.4f', sum(CAST(f4 AS DOUBLE)))"},
		{"f8", "round(sum(f8)::numeric, 6)::text", "printf('%.6f', sum(f8))"},
		{"amount", "(sum(amount) * 1000)::bigint::text", "CAST(CAST(sum(amount) * 1000 AS BIGINT) AS VARCHAR)"},
		{"name", "md5(string_agg(name, ',' ORDER BY id))", "md5(string_agg(name, ',' ORDER BY id))"},
		{"raw", "md5(string_agg(encode(raw, 'hex'), ',' ORDER BY id))", "md5(string_agg(lower(hex(raw)), ',' ORDER BY id))"},
		{"ok", "count(*) FILTER (WHERE ok)::text", "CAST(count(*) FILTER (WHERE ok) AS VARCHAR)"},
		{"d", "sum(d - date '2000-01-01')::text", "CAST(sum(date_diff('day', DATE '2000-01-01', d)) AS VARCHAR)"},
		{"ts", "sum((extract(epoch FROM ts) * 1000000)::bigint)::text", "CAST(sum(epoch_us(ts)) AS VARCHAR)"},
		{"tz", "sum((extract(epoch FROM tz) * 1000000)::bigint)::text", "CAST(sum(epoch_us(tz)) AS VARCHAR)"},
		{"u", "md5(string_agg(u::text, ',' ORDER BY id))", "md5(string_agg(CAST(u AS VARCHAR), ',' ORDER BY id))"},
		{"j", "md5(string_agg(j::text, ',' ORDER BY id))", "md5(string_agg(CAST(j AS VARCHAR), ',' ORDER BY id))"},
		{"m", "(sum(m::numeric) * 100)::bigint::text", "CAST(CAST(sum(m) * 100 AS BIGINT) AS VARCHAR)"},
	} {
		nulls := fmt.Sprintf("(count(*) - count(%s))", c.name)
		checks = append(checks, pgCheck{c.name, c.pg, c.duck},
			pgCheck{c.name + " NULLs", nulls + "::text", "CAST(" + nulls + " AS VARCHAR)"})
	}
	return checks
}()

// figures runs the checks' expressions (pick chooses the side) over from, in one query.
func figures(ctx context.Context, db *sql.DB, pick func(pgCheck) string, from string) ([]string, error) {
	exprs := make([]string, len(pgChecks))
	for i, c := range pgChecks {
		exprs[i] = "coalesce(" + pick(c) + ", 'NULL')"
	}
	got := make([]string, len(pgChecks))
	dest := make([]any, len(got))
	for i := range got {
		dest[i] = &got[i]
	}
	err := db.QueryRowContext(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM "+from).Scan(dest...)
	return got, err
}

// pgSource creates a table of every type the export maps, with a row of NULLs, and returns an
// open connection and the table's name.
func pgSource(t *testing.T, srv testenv.PostgresServer) (*sql.DB, string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Password = srv.Password
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { db.Close() })
	const name = "wharf_readback_mixed"
	for _, q := range []string{`DROP TABLE IF EXISTS ` + name,
		`CREATE TABLE ` + name + ` (id bigint, small smallint, i int, big bigint, f4 real, f8 double precision,
  amount numeric(12,3), name text, raw bytea, ok boolean, d date, ts timestamp, tz timestamptz, u uuid, j json,
  m money)`,
		`INSERT INTO ` + name + ` SELECT g, (g % 200) - 100, g * 3, g::bigint * 1000000007, g / 3.0, g / 7.0,
  g * 1.125 - 500, 'row ' || g || ' é', decode(md5(g::text), 'hex'), g % 3 = 0, date '1990-01-01' + g,
  timestamp '2024-01-01 00:00:00.123456' + g * interval '1 minute 1.5 seconds',
  timestamptz '2024-06-30 23:00:00+02' + g * interval '1 second', md5(g::text)::uuid,
  json_build_object('g', g, 's', 'x"y'), (g * 1.25 - 3000)::numeric::money
  FROM generate_series(1, 5000) g`,
		`UPDATE ` + name + ` SET f8 = NULL, name = NULL, u = NULL WHERE id % 97 = 0`,
		`INSERT INTO ` + name + ` (id) VALUES (5001), (5002)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return db, name
}

// TestDuckDBReadsThePostgresExport exports a PostgreSQL table of mixed types and compares the
// row count, per-column sums and checksums and NULL counts that PostgreSQL computes on the
// source with those DuckDB computes on the exported Parquet parts.
func TestDuckDBReadsThePostgresExport(t *testing.T) {
	srv := testenv.Postgres(t)
	ctx := context.Background()
	pg, table := pgSource(t, srv)
	dir := t.TempDir()
	e := export.Export{Name: "pg", Source: srv.URL, Password: srv.PasswordRef(t), Table: table,
		ChunkKey: "id", ChunkRows: 1500, Destination: filepath.Join(dir, "out") + "/"}
	res, err := export.Run(ctx, e, export.Options{StatePath: filepath.Join(dir, "state.db"), Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Parts) != 4 || res.Rows != 5002 {
		t.Fatalf("%d parts, %d rows; want 4 and 5002", len(res.Parts), res.Rows)
	}
	want, err := figures(ctx, pg, func(c pgCheck) string { return c.pg }, table)
	if err != nil {
		t.Fatalf("PostgreSQL: %v", err)
	}
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer duck.Close()
	glob := filepath.Join(dir, "out", "part-"+res.RunID+"-*.parquet")
	got, err := figures(ctx, duck, func(c pgCheck) string { return c.duck }, "read_parquet('"+glob+"')")
	if err != nil {
		t.Fatalf("DuckDB reading %s: %v", glob, err)
	}
	for i, c := range pgChecks {
		if got[i] != want[i] {
			t.Errorf("%s: DuckDB reads %s, PostgreSQL has %s", c.name, got[i], want[i])
		}
	}
	t.Logf("compared %d figures: %v", len(pgChecks), got)
}
