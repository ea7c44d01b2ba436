package reconcile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/testenv"
	_ "github.com/wharfdata/wharf/store/file"
)

// TestReconcileNotNullByConstraint: the non-null count of a column the source's catalog
// declares NOT NULL is not counted but taken from the row count, and is still compared: a
// column whose nulls were exported, then filled in and declared NOT NULL, mismatches in its
// non-null count (and in nothing else) in exactly the chunk that had nulls. The key's min
// and max, taken from its index, are still compared: a chunk's last row deleted mismatches
// in its max. A query export's columns are counted, whatever their table declares.
func TestReconcileNotNullByConstraint(t *testing.T) {
	srv, exec := postgres(t)
	table := "wharf_t_reconcile_not_null"
	exec(`DROP TABLE IF EXISTS ` + table)
	// n is NULL in chunk 1 (ids 101..200) only; its min is 1 in every chunk.
	exec(`CREATE TABLE ` + table + ` (id bigint PRIMARY KEY, n int, note text NOT NULL)`)
	exec(`INSERT INTO ` + table + ` SELECT g, CASE WHEN g % 10 = 0 AND g BETWEEN 101 AND 200 THEN NULL ELSE g % 7 + 1 END,
  'row ' || g FROM generate_series(1, 300) g`)
	ctx := context.Background()
	e, res, o := exportOf(t, srv, table, 3)
	exec(`UPDATE ` + table + ` SET n = 1 WHERE n IS NULL`)
	exec(`ALTER TABLE ` + table + ` ALTER n SET NOT NULL`)
	exec(`DELETE FROM ` + table + ` WHERE id = 300`) // chunk 2's max of id and of note ('row 300')
	r, got := statuses(t, o)
	want := []string{"match ", "mismatch column n non-null",
		"mismatch rows,column id non-null,column id max,column n non-null,column note non-null,column note max"}
	if !slices.Equal(got, want) {
		t.Errorf("after chunk 1's nulls were filled in, n declared NOT NULL and chunk 2's last row deleted: %q, want %q", got, want)
	}
	if d := r.Chunks[1].Differences; len(d) != 1 || *d[0].Source != 100 || *d[0].Part != 90 {
		t.Errorf("chunk 1's non-null count of n (source, part): %+v", d)
	}

	v, err := dataset.ValidateURL(ctx, res.Prefix, &e.Store, false)
	if err != nil || !v.Certified {
		t.Fatalf("validate: %v %+v", err, v)
	}
	byConstraint := func(e export.Export) []string {
		t.Helper()
		figs, err := export.Figures(ctx, &e, v.Manifest, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range figs[1].Columns {
			if c.NonNullByConstraint {
				out = append(out, c.Name)
			}
			if c.NonNull != 100 {
				t.Errorf("%s: column %s's non-null count in chunk 1 is %d, want 100", e.Table+e.Query, c.Name, c.NonNull)
			}
		}
		return out
	}
	if got := byConstraint(e); !slices.Equal(got, []string{"id", "n", "note"}) {
		t.Errorf("the table's columns whose non-null count is the constraint's: %v", got)
	}
	q := e
	q.Table, q.Query = "", `SELECT * FROM `+table
	if got := byConstraint(q); len(got) != 0 {
		t.Errorf("a query's columns whose non-null count is the constraint's: %v (want none)", got)
	}
}

// TestReconcileNotNullInherited: a NOT NULL on a table with inheritance children (not
// partitions) is no proof for the rows of the children, which may have dropped it: their
// non-null counts are counted, and a NULL set in a child after the run mismatches.
func TestReconcileNotNullInherited(t *testing.T) {
	srv, exec := postgres(t)
	parent, child := "wharf_t_reconcile_inherit", "wharf_t_reconcile_inherit_child"
	exec(`DROP TABLE IF EXISTS ` + child + `, ` + parent)
	exec(`CREATE TABLE ` + parent + ` (id bigint NOT NULL, n int NOT NULL)`)
	exec(`CREATE TABLE ` + child + ` () INHERITS (` + parent + `)`)
	exec(`ALTER TABLE ` + child + ` ALTER n DROP NOT NULL`)
	exec(`INSERT INTO ` + parent + ` SELECT g, 1 FROM generate_series(1, 100) g`)
	exec(`INSERT INTO ` + child + ` SELECT g, 1 FROM generate_series(101, 200) g`)
	_, _, o := exportOf(t, srv, parent, 2)
	exec(`UPDATE ` + child + ` SET n = NULL WHERE id = 150`)
	_, got := statuses(t, o)
	if want := []string{"match ", "mismatch column n non-null"}; !slices.Equal(got, want) {
		t.Errorf("after a NULL was set in the child table: %q, want %q", got, want)
	}
}

// postgres is the test PostgreSQL server and a function that runs a statement on it.
func postgres(t *testing.T) (testenv.PostgresServer, func(q string)) {
	t.Helper()
	srv := testenv.Postgres(t)
	db := srv.DB(t, "")
	return srv, func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// exportOf exports table (chunks of 100 ids by id) to a folder and reconciles the run once,
// which must match in all chunks; it returns the export, the run and the reconcile's options.
func exportOf(t *testing.T, srv testenv.PostgresServer, table string, chunks int) (export.Export, *export.Result, Options) {
	t.Helper()
	e := export.Export{Name: "pg", Source: srv.URL, Password: srv.PasswordRef(t), Table: table, ChunkKey: "id",
		ChunkRows: 100, Destination: "file://" + t.TempDir() + "/{table}/"}
	if err := e.Check(); err != nil { // the defaults, as the config's loader fills them
		t.Fatal(err)
	}
	res, err := export.Run(t.Context(), e, export.Options{StatePath: filepath.Join(t.TempDir(), "state.db"), Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Export: &e, Prefix: res.Prefix, Store: &e.Store, Parallel: 2}
	if r, err := Run(t.Context(), o); err != nil || r.Matched != chunks {
		t.Fatalf("a fresh export: %v %+v", err, r)
	}
	return e, res, o
}

// TestReconcileNotNullForeignTable: PostgreSQL does not enforce a foreign table's NOT NULL,
// so it proves nothing of the rows: a NULL the foreign data holds since the run mismatches.
func TestReconcileNotNullForeignTable(t *testing.T) {
	srv, exec := postgres(t)
	f, err := os.CreateTemp("", "wharf-reconcile-fdw-*.csv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	f.Close()
	write := func(null int) {
		t.Helper()
		var b strings.Builder
		for id := 1; id <= 200; id++ {
			if id == null {
				fmt.Fprintf(&b, "%d,\n", id)
			} else {
				fmt.Fprintf(&b, "%d,1\n", id)
			}
		}
		if err := os.WriteFile(f.Name(), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f.Name(), 0o644); err != nil { // the server reads it as its own user
			t.Fatal(err)
		}
	}
	write(0)
	table := "wharf_t_reconcile_foreign"
	exec(`CREATE EXTENSION IF NOT EXISTS file_fdw`)
	exec(`CREATE SERVER IF NOT EXISTS wharf_t_files FOREIGN DATA WRAPPER file_fdw`)
	exec(`DROP FOREIGN TABLE IF EXISTS ` + table)
	exec(`CREATE FOREIGN TABLE ` + table + ` (id bigint NOT NULL, n int NOT NULL) SERVER wharf_t_files
  OPTIONS (filename '` + f.Name() + `', format 'csv')`)
	_, _, o := exportOf(t, srv, table, 2)
	write(150)
	_, got := statuses(t, o)
	if want := []string{"match ", "mismatch column n non-null"}; !slices.Equal(got, want) {
		t.Errorf("after a NULL was written to the foreign table's file: %q, want %q", got, want)
	}
}

// statuses reconciles o and returns the report and each chunk's status with the figures that
// differ ("mismatch column n non-null").
func statuses(t *testing.T, o Options) (*Report, []string) {
	t.Helper()
	r, err := Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range r.Chunks {
		got = append(got, c.Status+" "+strings.Join(figures(c), ","))
	}
	return r, got
}
