package export

import (
	"context"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/wharfdata/wharf/internal/testenv"
)

// collect reads r with read and returns its batches' columns concatenated as one record.
func collect(t *testing.T, cols []Column, read func(emit func(arrow.RecordBatch) error) (int64, error)) arrow.RecordBatch {
	t.Helper()
	var recs []arrow.RecordBatch
	if _, err := read(func(rec arrow.RecordBatch) error {
		rec.Retain()
		recs = append(recs, rec)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tbl := array.NewTableFromRecords(schemaOf(cols), recs)
	defer tbl.Release()
	tr := array.NewTableReader(tbl, tbl.NumRows())
	defer tr.Release()
	if !tr.Next() {
		t.Fatal("no rows")
	}
	rec := tr.RecordBatch()
	rec.Retain()
	return rec
}

// TestPostgresBinaryReadMatchesDatabaseSQL: the pgx reader gives exactly the values the
// database/sql reader gives, for every type wharf maps, NULLs included.
func TestPostgresBinaryReadMatchesDatabaseSQL(t *testing.T) {
	srv := testenv.Postgres(t)
	table := pgTable(t, srv)
	ctx := context.Background()
	s, err := openPostgres(ctx, srv.URL, srv.PasswordRef(t), 1, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := &Export{Table: table, ChunkKey: "id"}
	cols, err := s.columns(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	lo, _ := boundOf(int64(0))
	hi, _ := boundOf(int64(1000))
	for _, r := range []Range{{Lo: lo, Hi: hi}, {Null: true}} {
		want := collect(t, cols, func(emit func(arrow.RecordBatch) error) (int64, error) {
			return s.readSQL(ctx, e, cols, r, window{}, 7, emit)
		})
		got := collect(t, cols, func(emit func(arrow.RecordBatch) error) (int64, error) {
			return s.readPostgres(ctx, e, cols, r, window{}, 7, emit)
		})
		if got.NumRows() != want.NumRows() || got.NumRows() == 0 {
			t.Fatalf("rows %d, want %d", got.NumRows(), want.NumRows())
		}
		for i := range cols {
			if !array.Equal(got.Column(i), want.Column(i)) {
				t.Errorf("column %s differs:\n got %v\nwant %v", cols[i].Name, got.Column(i), want.Column(i))
			}
		}
		got.Release()
		want.Release()
	}
}

func TestParseDecimalFastMatchesFromString(t *testing.T) {
	for _, c := range []struct {
		s     string
		p, sc int32
		fast  bool
	}{
		{"0", 12, 2, true}, {"-0.00", 12, 2, true}, {"123.45", 12, 2, true}, {"-999.5", 12, 2, true},
		{"0.05", 5, 3, true}, {"7", 5, 0, true}, {"123456789012.34", 14, 2, true},
		{"1.234", 12, 2, false}, {"1234", 5, 2, false}, {"NaN", 12, 2, false}, {"", 12, 2, false},
		{"1e5", 12, 2, false}, {"12345678901234567890", 38, 0, false}, {"-", 12, 2, false}, {".", 12, 2, false},
	} {
		n, ok := parseDecimalFast([]byte(c.s), c.p, c.sc)
		if ok != c.fast {
			t.Errorf("%q (%d,%d): fast %v, want %v", c.s, c.p, c.sc, ok, c.fast)
			continue
		}
		if !ok {
			continue
		}
		want, err := decimal128.FromString(c.s, c.p, c.sc)
		if err != nil || decimal128.FromI64(n) != want {
			t.Errorf("%q (%d,%d): %v, want %v (%v)", c.s, c.p, c.sc, n, want.ToString(c.sc), err)
		}
	}
}
