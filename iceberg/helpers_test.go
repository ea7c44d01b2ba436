package iceberg

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icego "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/wharfdata/wharf/store"
	_ "github.com/wharfdata/wharf/store/file"
	_ "github.com/wharfdata/wharf/store/mem"
	_ "github.com/wharfdata/wharf/store/s3"
)

var storeSeq atomic.Int64

// harness opens a fresh table location on one kind of store.
type harness struct {
	name string
	open func(t testing.TB) (url string, cfg *store.Config)
}

var harnesses = []harness{
	{"mem", func(t testing.TB) (string, *store.Config) {
		return fmt.Sprintf("mem://iceberg-%d-%d/tables/t", os.Getpid(), storeSeq.Add(1)), nil
	}},
	{"file", func(t testing.TB) (string, *store.Config) {
		return "file://" + t.TempDir() + "/tables/t", &store.Config{CreateDir: true}
	}},
}

// forEachStore runs f on the mem and the file store.
func forEachStore(t *testing.T, f func(t *testing.T, url string, cfg *store.Config)) {
	for _, h := range harnesses {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			url, cfg := h.open(t)
			f(t, url, cfg)
		})
	}
}

// tempBucket makes the bucket at url (a store URL of a bucket, opened with cfg) and, when t
// ends, empties and removes it.
func tempBucket(t testing.TB, url string, cfg *store.Config) *store.Store {
	t.Helper()
	root := openStore(t, url, cfg)
	if err := root.MakeBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		objs, err := root.ListAll(ctx, "")
		if err == nil {
			keys := make([]string, len(objs))
			for i, o := range objs {
				keys[i] = o.Key
			}
			err = root.DeleteMany(ctx, keys)
		}
		if err == nil {
			err = root.RemoveBucket(ctx)
		}
		if err != nil {
			t.Logf("cleanup of %s: %v", url, err)
		}
	})
	return root
}

func openStore(t testing.TB, url string, cfg *store.Config) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), url, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// newFolderTable creates an empty table (testSchema) in a fresh folder store.
func newFolderTable(t testing.TB) (*store.Store, *Table) {
	t.Helper()
	url, cfg := harnesses[0].open(t)
	st := openStore(t, url, cfg)
	tbl, err := Create(context.Background(), st, testSchema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return st, tbl
}

// testSchema is the tables' schema: id int64, name string, ts timestamptz.
func testSchema() *icego.Schema {
	return icego.NewSchema(0,
		icego.NestedField{ID: 1, Name: "id", Type: icego.PrimitiveTypes.Int64},
		icego.NestedField{ID: 2, Name: "name", Type: icego.PrimitiveTypes.String},
		icego.NestedField{ID: 3, Name: "ts", Type: icego.PrimitiveTypes.TimestampTz},
	)
}

var arrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
}, nil)

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// rowName is the name column of row id.
func rowName(id int64) string { return fmt.Sprintf("row-%d", id) }

// writeParquet writes rows ids [from, from+n) as a Parquet file at key (arrow-go's pqarrow,
// no field ids) and returns the key.
func writeParquet(t testing.TB, st *store.Store, key string, from, n int64) string {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrowSchema)
	defer b.Release()
	for id := from; id < from+n; id++ {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(rowName(id))
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(epoch.Add(time.Duration(id) * time.Second).UnixMicro()))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	tbl := array.NewTableFromRecords(arrowSchema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	if err := pqarrow.WriteTable(tbl, &buf, 1024, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), key, bytes.NewReader(buf.Bytes()), &store.PutOptions{Size: int64(buf.Len())}); err != nil {
		t.Fatal(err)
	}
	return key
}

// scanned is what iceberg-go's own scan reads of a table.
type scanned struct {
	ids   []int64
	names map[int64]string
	ts    map[int64]time.Time
}

func scan(t testing.TB, tbl *Table) scanned {
	t.Helper()
	at, err := tbl.Iceberg().Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	out := scanned{names: map[int64]string{}, ts: map[int64]time.Time{}}
	rdr := array.NewTableReader(at, 0)
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		ids := rec.Column(0).(*array.Int64)
		names := rec.Column(1).(*array.String)
		tss := rec.Column(2).(*array.Timestamp)
		for i := range int(rec.NumRows()) {
			id := ids.Value(i)
			out.ids = append(out.ids, id)
			out.names[id] = names.Value(i)
			out.ts[id] = time.UnixMicro(int64(tss.Value(i))).UTC()
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out.ids)
	return out
}

// checkRows fails t unless s holds exactly the rows ids [0, n) as writeParquet wrote them.
func checkRows(t testing.TB, s scanned, want []int64) {
	t.Helper()
	if !slices.Equal(s.ids, want) {
		t.Fatalf("scan read ids %v, want %v", s.ids, want)
	}
	for _, id := range want {
		if s.names[id] != rowName(id) {
			t.Errorf("row %d: name %q, want %q", id, s.names[id], rowName(id))
		}
		if w := epoch.Add(time.Duration(id) * time.Second); !s.ts[id].Equal(w) {
			t.Errorf("row %d: ts %v, want %v", id, s.ts[id], w)
		}
	}
}

func ids(from, n int64) []int64 {
	var out []int64
	for id := from; id < from+n; id++ {
		out = append(out, id)
	}
	return out
}

// checkHistory is the history checker: it reads the table as it is now and returns an error
// unless its history is linear (the first snapshot has no parent, each other's parent is
// the snapshot before it, sequence numbers rise by one, the current snapshot is the last),
// it has exactly appends snapshots, each an append of one file, and the current snapshot's
// data files are want, each once.
func checkHistory(ctx context.Context, st *store.Store, appends int, want []string) error {
	tbl, err := Load(ctx, st, nil)
	if err != nil {
		return err
	}
	return checkHistoryOf(ctx, tbl, appends, want)
}

// checkHistoryOf is checkHistory of a table already loaded (one kept in a catalog).
func checkHistoryOf(ctx context.Context, tbl *Table, appends int, want []string) error {
	snaps := tbl.Snapshots()
	var errs []error
	if len(snaps) != appends {
		errs = append(errs, fmt.Errorf("%d snapshots, want %d", len(snaps), appends))
	}
	slices.SortFunc(snaps, func(a, b table.Snapshot) int { return int(a.SequenceNumber - b.SequenceNumber) })
	for i, s := range snaps {
		switch {
		case i == 0 && s.ParentSnapshotID != nil:
			errs = append(errs, fmt.Errorf("first snapshot %d has parent %d", s.SnapshotID, *s.ParentSnapshotID))
		case i > 0 && (s.ParentSnapshotID == nil || *s.ParentSnapshotID != snaps[i-1].SnapshotID):
			errs = append(errs, fmt.Errorf("snapshot %d (seq %d): parent %v, want %d", s.SnapshotID, s.SequenceNumber, s.ParentSnapshotID, snaps[i-1].SnapshotID))
		}
		if s.SequenceNumber != int64(i+1) {
			errs = append(errs, fmt.Errorf("snapshot %d: sequence number %d, want %d", s.SnapshotID, s.SequenceNumber, i+1))
		}
		if s.Summary == nil || s.Summary.Operation != table.OpAppend || s.Summary.Properties["added-data-files"] != "1" {
			errs = append(errs, fmt.Errorf("snapshot %d: summary %v, want an append of 1 file", s.SnapshotID, s.Summary))
		}
	}
	if cur := tbl.CurrentSnapshot(); len(snaps) > 0 && (cur == nil || cur.SnapshotID != snaps[len(snaps)-1].SnapshotID) {
		errs = append(errs, fmt.Errorf("current snapshot %v is not the last", cur))
	}
	files, err := tbl.DataFiles(ctx)
	if err != nil {
		return err
	}
	count := map[string]int{}
	for _, df := range files {
		count[df.FilePath()]++
	}
	var lost, doubled []string
	for _, w := range want {
		if count[w] == 0 {
			lost = append(lost, w)
		}
	}
	for f, n := range count {
		if n > 1 || !slices.Contains(want, f) {
			doubled = append(doubled, f)
		}
	}
	if len(lost) > 0 {
		errs = append(errs, fmt.Errorf("%d files lost: %v", len(lost), firstFew(lost)))
	}
	if len(doubled) > 0 {
		errs = append(errs, fmt.Errorf("%d files doubled or unexpected: %v", len(doubled), firstFew(doubled)))
	}
	if len(errs) > 0 {
		return fmt.Errorf("history check: %w", joinErrs(errs))
	}
	return nil
}

// firstFew is the first three of names, for a message.
func firstFew(names []string) []string {
	if len(names) > 3 {
		return append(slices.Clip(names[:3]), "…")
	}
	return names
}

func joinErrs(errs []error) error {
	if len(errs) > 6 {
		errs = append(errs[:6], fmt.Errorf("… and %d more", len(errs)-6))
	}
	return fmt.Errorf("%v", errs)
}
