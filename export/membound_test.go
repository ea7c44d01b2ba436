package export

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/internal/testenv"
)

// batchRowCounts reads the rows of table t of src with readRange and returns the row count of
// each batch it emits.
func batchRowCounts(t *testing.T, s *source, table string) []int64 {
	t.Helper()
	ctx := context.Background()
	e := &Export{Table: table, ChunkKey: "id", Infinity: InfinityRefuse, InvalidUTF8: UTF8Refuse}
	cols, err := s.columns(ctx, e)
	must(t, err)
	lo, hi := dataset.IntBound(0), dataset.IntBound(1<<30)
	var counts []int64
	_, err = s.readRange(ctx, e, cols, Range{Lo: lo, Hi: hi}, window{}, 16384, func(rec arrow.RecordBatch) error {
		counts = append(counts, rec.NumRows())
		return nil
	})
	must(t, err)
	return counts
}

// TestBatchesBoundedByBytes: rows of 1 MiB each are emitted in batches of about
// maxBatchBytes, not 16,384 rows at a time, from SQLite and from PostgreSQL, so that memory
// per chunk in flight does not grow with the width of the rows.
func TestBatchesBoundedByBytes(t *testing.T) {
	defer func(old int) { maxBatchBytes = old }(maxBatchBytes)
	maxBatchBytes = 3 << 20
	check := func(t *testing.T, counts []int64) {
		var total int64
		for _, n := range counts {
			total += n
			if n > 3 {
				t.Errorf("a batch of %d rows of 1 MiB: %v", n, counts)
			}
		}
		if total != 20 {
			t.Errorf("%d rows in batches %v, want 20", total, counts)
		}
	}
	path := filepath.Join(t.TempDir(), "wide.db")
	db := openDB(t, path)
	exec(t, db, `CREATE TABLE w (id INTEGER PRIMARY KEY, v TEXT)`)
	exec(t, db, `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 20)
  INSERT INTO w SELECT i, printf('%.*c', 1048576, 'x') FROM g`)
	s, err := openSQLite(context.Background(), "sqlite://"+path)
	must(t, err)
	defer s.Close()
	check(t, batchRowCounts(t, s, "w"))

	t.Run("postgres", func(t *testing.T) {
		srv := testenv.Postgres(t)
		table := pgFresh(t, srv.DB(t, ""), `CREATE TABLE {t} (id int, v text)`,
			`INSERT INTO {t} SELECT g, repeat('x', 1048576) FROM generate_series(1, 20) g`)
		s, err := openPostgres(context.Background(), srv.URL, srv.PasswordRef(t), 1, os.Getenv)
		must(t, err)
		defer s.Close()
		check(t, batchRowCounts(t, s, table))
	})
}

// TestRowGroupsBoundedByBytes: a part of rows whose pages reach maxRowGroupBytes before 64 Ki
// rows holds several row groups, and every row reads back. (The pages counted are those
// flushed: the row group closes at most one data page per column past the bound.)
func TestRowGroupsBoundedByBytes(t *testing.T) {
	defer func(old int64) { maxRowGroupBytes = old }(maxRowGroupBytes)
	maxRowGroupBytes = 256 << 10
	path := filepath.Join(t.TempDir(), "src.db")
	db := openDB(t, path)
	exec(t, db, `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`)
	exec(t, db, `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 3000)
  INSERT INTO t SELECT i, hex(randomblob(256)) FROM g`)
	dir := t.TempDir()
	e := Export{Name: "t", Source: "sqlite://" + path, Table: "t", ChunkKey: "id", Destination: "file://" + dir + "/"}
	res, err := Run(context.Background(), e, Options{StatePath: filepath.Join(t.TempDir(), "state.db"), BatchRows: 500})
	must(t, err)
	f, err := os.Open(filepath.Join(dir, res.Parts[0].Key))
	must(t, err)
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	must(t, err)
	defer pf.Close()
	if pf.NumRowGroups() < 2 || pf.NumRows() != 3000 {
		t.Errorf("%d row groups, %d rows: want several row groups of 3000 rows", pf.NumRowGroups(), pf.NumRows())
	}
	if v := validateDir(t, dir, true); !v.Certified {
		t.Errorf("not certified: %s", strings.Join([]string{v.Problems[0].Code, v.Problems[0].Message}, ": "))
	}
}
