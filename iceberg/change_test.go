package iceberg

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/wharfdata/wharf/store"
)

// writeWithFooter writes rows [from, from+n) of schema (id int64; name as writeParquet
// writes it; ts; any other string column "<col>-row-<id>") at key and returns the File with
// its footer.
func writeWithFooter(t testing.TB, st *store.Store, key string, schema *arrow.Schema, from, n int64) File {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for id := from; id < from+n; id++ {
		b.Field(0).(*array.Int64Builder).Append(id)
		for c := 1; c < schema.NumFields(); c++ {
			switch fb := b.Field(c).(type) {
			case *array.StringBuilder:
				if schema.Field(c).Name == "name" {
					fb.Append(rowName(id))
				} else {
					fb.Append(schema.Field(c).Name + "-" + rowName(id))
				}
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(epoch.UnixMicro() + id*1e6))
			case *array.Int64Builder:
				fb.Append(id * 7)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	footer, err := fw.FileMetadata()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), key, bytes.NewReader(buf.Bytes()), &store.PutOptions{Size: int64(buf.Len())}); err != nil {
		t.Fatal(err)
	}
	return File{Path: key, Size: int64(buf.Len()), Footer: footer}
}

func TestCommitChanges(t *testing.T) {
	forEachStore(t, func(t *testing.T, url string, cfg *store.Config) {
		ctx := context.Background()
		st := openStore(t, url, cfg)
		tbl, err := Open(ctx, st, arrowSchema, nil)
		if err != nil {
			t.Fatal(err)
		}
		// An append from footers, made once: the same ID again commits nothing.
		f1 := writeWithFooter(t, st, "data/a.parquet", arrowSchema, 0, 10)
		c, err := tbl.Commit(ctx, Change{ID: "run-1", Files: []File{f1}, Schema: arrowSchema, Summary: map[string]string{"wharf.run-id": "run-1"}})
		if err != nil || c.Already || c.Version != 2 || c.Snapshot == 0 {
			t.Fatalf("first commit: %+v, %v", c, err)
		}
		again, err := Load(ctx, openStore(t, url, cfg), nil)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := again.Commit(ctx, Change{ID: "run-1", Files: []File{f1}, Schema: arrowSchema})
		if err != nil || !c2.Already || c2.Snapshot != c.Snapshot || again.Version() != 2 {
			t.Fatalf("the same change again: %+v, version %d, %v; want already in snapshot %d", c2, again.Version(), err, c.Snapshot)
		}
		if s := again.CurrentSnapshot(); s.Summary.Properties["wharf.run-id"] != "run-1" {
			t.Errorf("summary %v lacks wharf.run-id", s.Summary.Properties)
		}
		// A file read from the store (no footer) appended beside it.
		key := writeParquet(t, st, "data/b.parquet", 10, 5)
		if _, err := tbl.Commit(ctx, Change{ID: "run-2", Files: []File{{Path: key}}}); err != nil {
			t.Fatal(err)
		}
		checkRows(t, scan(t, tbl), ids(0, 15))

		// A column added evolves the schema, with a new field id, in the same snapshot.
		wider := arrow.NewSchema(append(arrowSchema.Fields(), arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}), nil)
		f3 := writeWithFooter(t, st, "data/c.parquet", wider, 15, 5)
		if _, err := tbl.Commit(ctx, Change{ID: "run-3", Files: []File{f3}, Schema: wider}); err != nil {
			t.Fatal(err)
		}
		note, ok := tbl.Schema().FindFieldByName("note")
		if !ok || note.ID != 4 {
			t.Fatalf("schema after the new column: %v", tbl.Schema())
		}
		checkRows(t, scan(t, tbl), ids(0, 20))

		// Any other change is refused by name, and nothing is committed.
		v := tbl.Version()
		retyped := arrow.NewSchema([]arrow.Field{arrowSchema.Field(0), {Name: "name", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, arrowSchema.Field(2), wider.Field(3)}, nil)
		f4 := writeWithFooter(t, st, "data/d.parquet", retyped, 20, 5)
		_, err = tbl.Commit(ctx, Change{ID: "run-4", Files: []File{f4}, Schema: retyped})
		if !errors.Is(err, ErrSchemaChanged) || !bytes.Contains([]byte(err.Error()), []byte(`column "name" is string in the table, long in the files`)) {
			t.Fatalf("a column of another type: %v, want ErrSchemaChanged naming it", err)
		}
		_, err = tbl.Commit(ctx, Change{ID: "run-4", Files: []File{f1}, Schema: arrowSchema})
		if !errors.Is(err, ErrSchemaChanged) || !bytes.Contains([]byte(err.Error()), []byte(`column "note" of the table is not in the files`)) {
			t.Fatalf("a column dropped: %v, want ErrSchemaChanged naming it", err)
		}
		if tbl.Version() != v {
			t.Fatalf("a refused change committed version %d", tbl.Version())
		}

		// An overwrite replaces every file; done twice, once.
		f5 := writeWithFooter(t, st, "data/e.parquet", wider, 100, 3)
		c5, err := tbl.Commit(ctx, Change{ID: "run-5", Overwrite: true, Files: []File{f5}, Schema: wider})
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, scan(t, tbl), ids(100, 3))
		if op := tbl.CurrentSnapshot().Summary.Operation; op != "overwrite" {
			t.Errorf("overwrite made a %s snapshot", op)
		}
		if c, err := tbl.Commit(ctx, Change{ID: "run-5", Overwrite: true, Files: []File{f5}, Schema: wider}); err != nil || !c.Already || c.Snapshot != c5.Snapshot {
			t.Fatalf("the overwrite again: %+v, %v", c, err)
		}
		if got := tbl.CommitIDs(); len(got) != 4 || got[0] != "run-1" || got[3] != "run-5" {
			t.Errorf("commit ids %v", got)
		}

		// A guard that refuses commits nothing, and sees the current snapshot's summary.
		v = tbl.Version()
		var seen map[string]string
		_, err = tbl.Commit(ctx, Change{ID: "run-0", Overwrite: true, Files: []File{f1}, Schema: wider,
			Guard: func(cur map[string]string) error { seen = cur; return ErrStaleCommit }})
		if !errors.Is(err, ErrStaleCommit) || tbl.Version() != v || seen[CommitIDKey] != "run-5" {
			t.Fatalf("a guarded commit: %v, v%d, guard saw %v", err, tbl.Version(), seen)
		}

		// Files replacing current ones (a repair): in one snapshot; none current: nothing
		// committed; only some: refused.
		f6 := writeWithFooter(t, st, "data/f.parquet", wider, 200, 4)
		if _, err := tbl.Commit(ctx, Change{ID: "repair-1", Files: []File{f6}, Remove: []string{"data/e.parquet"}}); err != nil {
			t.Fatal(err)
		}
		checkRows(t, scan(t, tbl), ids(200, 4))
		v = tbl.Version()
		if c, err := tbl.Commit(ctx, Change{ID: "repair-2", Files: []File{f5}, Remove: []string{"data/e.parquet"}}); err != nil || !c.NotCurrent || tbl.Version() != v {
			t.Fatalf("replacing a file not current: %+v, %v, v%d", c, err, tbl.Version())
		}
		_, err = tbl.Commit(ctx, Change{ID: "repair-3", Files: []File{f5}, Remove: []string{"data/e.parquet", "data/f.parquet"}})
		if !errors.Is(err, ErrMetadataInvalid) || tbl.Version() != v {
			t.Fatalf("replacing files of which one is current: %v, want ErrMetadataInvalid and nothing committed", err)
		}
	})
}
