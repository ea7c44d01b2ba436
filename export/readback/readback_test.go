package readback

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver

	"github.com/wharfdata/wharf/export"
	_ "github.com/wharfdata/wharf/store/file"
)

// stats are what the test compares between the source and the exported parts.
type stats struct {
	Rows, SumID, Shipped, NullNotes, NullAmounts int64
	SumCents                                     int64 // sum(amount) * 100, exact
	MinPlaced, MaxPlaced                         string
	Customers                                    int64 // distinct
}

const statsSQL = `SELECT count(*), sum(id), count(*) FILTER (WHERE shipped), count(*) - count(note),
  count(*) - count(amount), CAST(round(sum(amount) * 100) AS BIGINT),
  strftime(min(placed_at), '%Y-%m-%d %H:%M:%S'), strftime(max(placed_at), '%Y-%m-%d %H:%M:%S'),
  count(DISTINCT customer) FROM `

func (s *stats) scan(row *sql.Row) error {
	return row.Scan(&s.Rows, &s.SumID, &s.Shipped, &s.NullNotes, &s.NullAmounts, &s.SumCents,
		&s.MinPlaced, &s.MaxPlaced, &s.Customers)
}

func TestDuckDBReadsTheExport(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "demo.db")
	if err := export.CreateDemo(ctx, src, 2500); err != nil {
		t.Fatal(err)
	}
	e := export.Export{Name: "orders", Source: "sqlite://" + src, Table: "orders", ChunkKey: "id",
		ChunkRows: 600, Destination: filepath.Join(dir, "out") + "/"}
	res, err := export.Run(ctx, e, export.Options{StatePath: filepath.Join(dir, "state.db"), Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Parts) != 5 {
		t.Fatalf("%d parts, want 5", len(res.Parts))
	}

	duck, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer duck.Close()
	var got, want stats
	glob := filepath.Join(dir, "out", "part-"+res.RunID+"-*.parquet")
	if err := got.scan(duck.QueryRowContext(ctx, statsSQL+"read_parquet('"+glob+"')")); err != nil {
		t.Fatalf("DuckDB reading %s: %v", glob, err)
	}
	// The source's own answer, computed by DuckDB's SQLite reader would be a second
	// unknown; compute it in SQLite instead.
	lite, err := sql.Open("sqlite", "file:"+src+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	err = lite.QueryRowContext(ctx, `SELECT count(*), sum(id), sum(shipped), count(*) - count(note),
  count(*) - count(amount), CAST(round(sum(amount) * 100) AS INTEGER), min(placed_at), max(placed_at),
  count(DISTINCT customer) FROM orders`).Scan(&want.Rows, &want.SumID, &want.Shipped, &want.NullNotes,
		&want.NullAmounts, &want.SumCents, &want.MinPlaced, &want.MaxPlaced, &want.Customers)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("DuckDB read %+v", got)
	if got != want {
		t.Errorf("DuckDB read  %+v\nthe source has %+v", got, want)
	}
	var decimalType string
	if err := duck.QueryRowContext(ctx, "SELECT typeof(amount) FROM read_parquet('"+glob+"') LIMIT 1").Scan(&decimalType); err != nil || decimalType != "DECIMAL(10,2)" {
		t.Errorf("amount reads as %q (%v), want DECIMAL(10,2)", decimalType, err)
	}
}
