package iceberg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	icego "github.com/apache/iceberg-go"
	icesql "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	_ "modernc.org/sqlite" // the SQLite driver "sqlite"
)

var catalogSeq atomic.Int64

// catalogs are the databases the catalog tests run on: SQLite in a temporary file, and the
// test PostgreSQL server (each test a catalog name of its own in it).
var catalogs = []struct {
	name string
	open func(t *testing.T) (*sql.DB, Dialect)
}{
	{"sqlite", func(t *testing.T) (*sql.DB, Dialect) {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "catalog.db")+"?_pragma=busy_timeout(10000)&_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, SQLite
	}},
	{"postgres", func(t *testing.T) (*sql.DB, Dialect) { return testenv.Postgres(t).DB(t, ""), Postgres }},
}

func newCatalog(t *testing.T, db *sql.DB, d Dialect) *Catalog {
	t.Helper()
	c, err := NewCatalog(context.Background(), db, d, fmt.Sprintf("wharf-test-%d-%d", time.Now().UnixNano(), catalogSeq.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A table kept in a SQL catalog, on a folder store that ignores every condition: created,
// appended to and loaded again by wharf, read by iceberg-go's own SQL catalog (an
// implementation that is not wharf's) with the same rows, committed to by it in turn, and
// that commit seen by wharf: the two keep one catalog.
func TestCatalogTable(t *testing.T) {
	for _, c := range catalogs {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			db, dialect := c.open(t)
			cat := newCatalog(t, db, dialect)
			dir := t.TempDir()
			// A store that refuses every conditional write: the catalog's database makes the
			// compare-and-set.
			st := store.New(refusesConditions{openStore(t, "file://"+dir+"/lake/events", &store.Config{CreateDir: true}).Bucket()}, nil)
			opts := &Options{Catalog: cat, Ident: Ident{Namespace: "raw", Name: "events"}}
			tbl, err := Create(ctx, st, testSchema(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Create(ctx, st, testSchema(), opts); !errors.Is(err, ErrTableExists) {
				t.Fatalf("a second create: %v, want WHARF_ICEBERG_TABLE_EXISTS", err)
			}
			a := writeParquet(t, st, "data/a.parquet", 0, 10)
			b := writeParquet(t, st, "data/b.parquet", 10, 5)
			if err := tbl.Append(ctx, []string{a}); err != nil {
				t.Fatal(err)
			}
			if err := tbl.Append(ctx, []string{b}); err != nil {
				t.Fatal(err)
			}
			again, err := Load(ctx, st, opts)
			if err != nil {
				t.Fatal(err)
			}
			if again.Version() != 3 || !strings.Contains(again.MetadataLocation(), "/metadata/00003-") {
				t.Fatalf("loaded version %d at %s, want 3 at metadata/00003-…", again.Version(), again.MetadataLocation())
			}
			checkRows(t, scan(t, again), ids(0, 15))
			if _, err := Load(ctx, st, nil); !errors.Is(err, ErrNoTable) {
				t.Errorf("the bucket has a catalog table's files only: Load without the catalog = %v, want WHARF_ICEBERG_NO_TABLE", err)
			}

			theirs, err := icesql.NewCatalog(cat.Name(), db, icesql.SupportedDialect(dialect), icego.Properties{})
			if err != nil {
				t.Fatal(err)
			}
			it, err := theirs.LoadTable(ctx, table.Identifier{"raw", "events"})
			if err != nil {
				t.Fatalf("iceberg-go's SQL catalog cannot load the table: %v", err)
			}
			if it.MetadataLocation() != again.MetadataLocation() {
				t.Errorf("iceberg-go loads %s, wharf %s", it.MetadataLocation(), again.MetadataLocation())
			}
			at, err := it.Scan().ToArrowTable(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if at.NumRows() != 15 {
				t.Errorf("iceberg-go's scan through its catalog: %d rows, want 15", at.NumRows())
			}
			at.Release()

			c3 := writeParquet(t, st, "data/c.parquet", 15, 5)
			tx := it.NewTransaction()
			if err := tx.AddFiles(ctx, []string{again.Location() + "/" + c3}, nil, false); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Commit(ctx); err != nil {
				t.Fatalf("iceberg-go's commit through its catalog: %v", err)
			}
			if err := again.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			if again.Version() != 4 {
				t.Errorf("after iceberg-go's commit wharf reads version %d (%s), want 4", again.Version(), again.MetadataLocation())
			}
			checkRows(t, scan(t, again), ids(0, 20))
			d := writeParquet(t, st, "data/d.parquet", 20, 5)
			if err := again.Append(ctx, []string{d}); err != nil {
				t.Fatal(err)
			}
			checkRows(t, scan(t, again), ids(0, 25))
		})
	}
}

// appendThroughCatalog has writers, each with its own Table, append one file per commit to
// a catalog table kept on a store with no conditional writes at all; broken moves the
// catalog's row without comparing it.
func appendThroughCatalog(t *testing.T, db *sql.DB, dialect Dialect, broken bool) (*Table, []string) {
	t.Helper()
	ctx := context.Background()
	cat := newCatalog(t, db, dialect)
	url := "file://" + t.TempDir() + "/t"
	opts := &Options{Catalog: cat, Ident: Ident{Namespace: "raw", Name: "events"}, Attempts: testAttempts,
		Backoff: 2 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	base := openStore(t, url, &store.Config{CreateDir: true})
	if _, err := Create(ctx, base, testSchema(), opts); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		files []string
		wg    sync.WaitGroup
	)
	for w := range writers {
		wcat := *cat
		wcat.unconditional = broken
		wopts := *opts
		wopts.Catalog = &wcat
		tbl, err := Load(ctx, openStore(t, url, &store.Config{CreateDir: true}), &wopts)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for i := range filesEach {
				key := writeParquet(t, base, fmt.Sprintf("data/w%d-%02d.parquet", w, i), int64(w*filesEach+i)*10, 10)
				err := tbl.Append(ctx, []string{key})
				mu.Lock()
				files = append(files, tbl.Location()+"/"+key)
				mu.Unlock()
				if err != nil && !broken {
					t.Errorf("writer %d: %v", w, err)
				}
			}
		})
	}
	wg.Wait()
	tbl, err := Load(ctx, base, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, files
}

// Four writers appending ten files each through a SQL catalog end with a linear history of
// 40 appends, each file once; the same writers moving the row without the comparison lose
// appends, and the history checker says so.
func TestCatalogConcurrentAppends(t *testing.T) {
	for _, c := range catalogs {
		t.Run(c.name, func(t *testing.T) {
			db, dialect := c.open(t)
			tbl, files := appendThroughCatalog(t, db, dialect, false)
			if err := checkHistoryOf(context.Background(), tbl, writers*filesEach, files); err != nil {
				t.Fatal(err)
			}
			broken, files := appendThroughCatalog(t, db, dialect, true)
			err := checkHistoryOf(context.Background(), broken, writers*filesEach, files)
			if err == nil {
				t.Fatal("commits that move the row without comparing it: the history checker found nothing wrong")
			}
			t.Logf("checker on the broken variant: %v", err)
		})
	}
}

// refusesConditions is a store without conditional writes: a put with a condition fails.
type refusesConditions struct{ driver.Bucket }

func (r refusesConditions) Unwrap() driver.Bucket { return r.Bucket }

func (r refusesConditions) Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error) {
	if opts != nil && (opts.IfNoneMatch || opts.IfMatch != "") {
		return store.ObjectInfo{}, &store.Error{Op: "put", Key: key, Kind: store.ErrUnsupported, Err: errors.New("this store has no conditional writes")}
	}
	return r.Bucket.Put(ctx, key, body, opts)
}

// Writers opening one table of a catalog at once (create-or-load) all get it: one creates it,
// the others load it, and the catalog has one row.
func TestCatalogOpenAtOnce(t *testing.T) {
	for _, c := range catalogs {
		t.Run(c.name, func(t *testing.T) {
			db, dialect := c.open(t)
			cat := newCatalog(t, db, dialect)
			url := "file://" + t.TempDir() + "/t"
			schema := icebirdArrow
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for range writers {
				wg.Go(func() {
					tbl, err := Open(context.Background(), openStore(t, url, &store.Config{CreateDir: true}), schema,
						&Options{Catalog: cat, Ident: Ident{Namespace: "raw", Name: "t"}})
					if err == nil && tbl.Version() != 1 {
						err = fmt.Errorf("opened at version %d, want 1", tbl.Version())
					}
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			var n int
			if err := db.QueryRow(cat.q(`SELECT count(*) FROM iceberg_tables WHERE catalog_name = ?`), cat.Name()).Scan(&n); err != nil || n != 1 {
				t.Fatalf("%d rows for the table (%v), want 1", n, err)
			}
		})
	}
}

// A commit whose UPDATE moved the row but whose answer was lost is settled by reading the
// row back (only this commit can have named its metadata file): the commit succeeds, once,
// instead of reporting a failure for a change that is in the table.
func TestCatalogLostAnswer(t *testing.T) {
	for _, c := range catalogs {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			db, dialect := c.open(t)
			cat := newCatalog(t, db, dialect)
			var lost atomic.Int32
			cat.loseAnswer = func() bool { return lost.Add(1) == 1 }
			st := openStore(t, "file://"+t.TempDir()+"/t", &store.Config{CreateDir: true})
			opts := &Options{Catalog: cat, Ident: Ident{Namespace: "raw", Name: "t"}}
			tbl, err := Create(ctx, st, testSchema(), opts)
			if err != nil {
				t.Fatal(err)
			}
			a := writeParquet(t, st, "data/a.parquet", 0, 10)
			if err := tbl.Append(ctx, []string{a}); err != nil {
				t.Fatalf("an append whose answer was lost: %v, want it found committed", err)
			}
			if lost.Load() < 1 {
				t.Fatal("no answer was lost: the test tested nothing")
			}
			again, err := Load(ctx, st, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(again.Snapshots()) != 1 || again.Version() != 2 || again.MetadataLocation() != tbl.MetadataLocation() {
				t.Fatalf("after the lost answer: %d snapshots, version %d at %s (the writer holds %s); want one append at version 2",
					len(again.Snapshots()), again.Version(), again.MetadataLocation(), tbl.MetadataLocation())
			}
			checkRows(t, scan(t, again), ids(0, 10))
		})
	}
}
