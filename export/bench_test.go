package export

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/wharfdata/wharf/internal/testenv"
)

// BenchmarkPostgresExport exports WHARF_BENCH_ROWS rows (default 200,000) of bench/export.sh's
// table shape to the file store, for profiling (-cpuprofile, -memprofile).
func BenchmarkPostgresExport(b *testing.B) {
	srv := testenv.Postgres(b)
	rows := 200_000
	if n, err := strconv.Atoi(os.Getenv("WHARF_BENCH_ROWS")); err == nil && n > 0 {
		rows = n
	}
	cfg, err := pgx.ParseConfig(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Password = srv.Password
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	table := "wharf_bench_" + strconv.Itoa(rows)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS ` + table + ` (id bigint PRIMARY KEY, qty int, price double precision,
  amount numeric(12,2), name text, ok boolean, at timestamptz, u uuid)`); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO ` + table + ` SELECT g, (g % 1000)::int, g / 7.0, (g % 100000) / 100.0,
  'item ' || g, g % 3 = 0, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second', md5(g::text)::uuid
  FROM generate_series(1, ` + strconv.Itoa(rows) + `) g ON CONFLICT DO NOTHING`); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		e := Export{Name: "bench", Source: srv.URL, Password: srv.PasswordRef(b), Table: table, ChunkKey: "id",
			Destination: "file://" + b.TempDir() + "/"}
		res, err := Run(context.Background(), e, Options{StatePath: filepath.Join(b.TempDir(), "state.db"), Parallel: 2})
		if err != nil || res.Rows != int64(rows) {
			b.Fatalf("rows %v: %v", res, err)
		}
	}
}
