package export

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/store"
	_ "github.com/wharfdata/wharf/store/file"
	_ "github.com/wharfdata/wharf/store/mem"
)

// makeDB creates a SQLite database with table t of n rows covering every mapped type, with
// NULLs every 7th row. It returns the path.
func makeDB(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec(t, db, `CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, price DECIMAL(10,2), score REAL,
  ok BOOLEAN, day DATE, at TIMESTAMP, blob BLOB, doc JSON, uid UUID)`)
	insertRows(t, db, 1, n)
	return path
}

func exec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func insertRows(t *testing.T, db *sql.DB, from, to int) {
	t.Helper()
	tx, _ := db.Begin()
	for i := from; i <= to; i++ {
		if i%7 == 0 {
			_, err := tx.Exec(`INSERT INTO t (id) VALUES (?)`, i)
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		_, err := tx.Exec(`INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, i, fmt.Sprintf("row %d", i),
			fmt.Sprintf("%d.%02d", i, i%100), float64(i)/4, i%2 == 0, "2024-01-02",
			fmt.Sprintf("2024-01-02 03:04:%02d", i%60), []byte{byte(i), 0, 1}, fmt.Sprintf(`{"i":%d}`, i),
			fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// fixture is an export of makeDB's table to a file store prefix.
type fixture struct {
	db    string
	dir   string // the file store's root
	state string
	exp   Export
}

func newFixture(t *testing.T, rows, chunk int) *fixture {
	t.Helper()
	f := &fixture{db: makeDB(t, rows), dir: t.TempDir(), state: filepath.Join(t.TempDir(), "state.db")}
	f.exp = Export{Name: "orders", Source: "sqlite://" + f.db, Table: "t", ChunkKey: "id", ChunkRows: chunk,
		Destination: "file://" + f.dir + "/{export}/"}
	return f
}

func (f *fixture) opts() Options { return Options{StatePath: f.state, Parallel: 2, BatchRows: 16} }

func (f *fixture) run(t *testing.T, o Options) (*Result, error) {
	t.Helper()
	return Run(context.Background(), f.exp, o)
}

func (f *fixture) mustRun(t *testing.T) *Result {
	t.Helper()
	res, err := f.run(t, f.opts())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}

func (f *fixture) prefix() string { return filepath.Join(f.dir, f.exp.Name) }

func (f *fixture) store(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), "file://"+f.prefix()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func (f *fixture) validate(t *testing.T, deep bool) *dataset.Validation {
	t.Helper()
	v, err := dataset.Validate(context.Background(), f.store(t), f.prefix(), deep)
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	return v
}

// snapshot returns every file under dir with its content, to show a failed run touched nothing.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

func hasProblem(v *dataset.Validation, code string) bool {
	for _, p := range v.Problems {
		if p.Code == code {
			return true
		}
	}
	return false
}

func memStore(t *testing.T) *store.Store {
	t.Helper()
	return memNew()
}

// readParquet reads a local Parquet file whole as one record.
func readParquet(t *testing.T, path string) arrow.RecordBatch {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
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

// openFileStore opens the file store rooted at dir.
func openFileStore(t *testing.T, dir string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), "file://"+dir+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
