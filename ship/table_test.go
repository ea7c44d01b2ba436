package ship

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icegotable "github.com/apache/iceberg-go/table"

	"github.com/wharfdata/wharf/iceberg"
	"github.com/wharfdata/wharf/internal/icebird"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	_ "github.com/wharfdata/wharf/store/file" // the file:// backend
	"github.com/wharfdata/wharf/store/probe"
)

// The shipped Parquet files' columns: id, name, score; a later file may add note.
func rowsSchema(note bool) *arrow.Schema {
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}
	if note {
		fields = append(fields, arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// rows is the record of ids [from, from+n): each value a function of its id, a null now and
// then.
func rows(schema *arrow.Schema, from, n int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for id := from; id < from+n; id++ {
		b.Field(0).(*array.Int64Builder).Append(id)
		if id%5 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append("event " + strconv.FormatInt(id, 10))
		}
		b.Field(2).(*array.Float64Builder).Append(float64(id) / 4)
		if schema.NumFields() > 3 {
			b.Field(3).(*array.StringBuilder).Append("n" + strconv.FormatInt(id, 10))
		}
	}
	return b.NewRecordBatch()
}

// addParquet spools rows(schema, from, n) as a Parquet file of dataset.
func (fx *fixture) addParquet(t *testing.T, dataset string, schema *arrow.Schema, from, n int64) spool.File {
	t.Helper()
	rec := rows(schema, from, n)
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	if err := pqarrow.WriteTable(tbl, &buf, 1024, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), fmt.Sprintf("f%d.parquet", len(fx.files)))
	if err := os.WriteFile(src, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := spool.Add(t.Context(), fx.dir, src, spool.AddOptions{Dataset: dataset, Records: uint64(n),
		Time: eventTime.Add(time.Duration(len(fx.files)) * time.Hour), Clock: spool.ClockSynced})
	if err != nil {
		t.Fatal(err)
	}
	fx.files = append(fx.files, f)
	fx.data[f.ID] = buf.Bytes()
	return f
}

// addParquets spools n Parquet files of dataset events, file i the ids [i·rows, (i+1)·rows).
func (fx *fixture) addParquets(t *testing.T, n, rows int64) []spool.File {
	t.Helper()
	var files []spool.File
	for i := range n {
		files = append(files, fx.addParquet(t, "events", rowsSchema(false), i*rows, rows))
	}
	return files
}

// wrappedFolder is a folder store whose bucket wrap decorates (a test's fault or missing
// condition), and its directory.
func wrappedFolder(t *testing.T, wrap func(driver.Bucket) driver.Bucket) (string, *store.Store) {
	t.Helper()
	dir := t.TempDir()
	inner, err := store.Open(t.Context(), "file://"+dir, &store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, store.New(wrap(inner.Bucket()), nil)
}

// expected is the icebird.Result of the given id ranges, of schema.
func expected(t *testing.T, schema *arrow.Schema, ranges ...[2]int64) *icebird.Result {
	t.Helper()
	var recs []arrow.RecordBatch
	for _, r := range ranges {
		recs = append(recs, rows(schema, r[0], r[1]))
	}
	tbl := array.NewTableFromRecords(schema, recs)
	defer tbl.Release()
	for _, r := range recs {
		r.Release()
	}
	want, err := icebird.FromArrow(tbl)
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// tableAt loads the table at the dataset's root below st.
func tableAt(t *testing.T, st *store.Store, cfg Config, dataset string) *iceberg.Table {
	t.Helper()
	tbl, err := iceberg.Load(t.Context(), st.Sub("wharf/v1/"+cfg.Pipeline+"/"+dataset), nil)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// checkTable checks that tbl holds exactly the files given, each once, its rows those of
// want as iceberg-go's scan and icebird read them, and that no snapshot added more than
// most files.
func checkTable(t *testing.T, st *store.Store, cfg Config, tbl *iceberg.Table, files []spool.File, epoch uint64, want *icebird.Result, most int) {
	t.Helper()
	ctx := t.Context()
	dfs, err := tbl.DataFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got, keys []string
	for _, df := range dfs {
		got = append(got, df.FilePath())
	}
	for _, f := range files {
		keys = append(keys, strings.TrimRight(tbl.Location(), "/")+"/"+strings.TrimPrefix(ObjectKey(cfg.Pipeline, cfg.Node, epoch, f), "wharf/v1/"+cfg.Pipeline+"/"+f.Dataset+"/"))
	}
	slices.Sort(got)
	slices.Sort(keys)
	if !slices.Equal(got, keys) {
		t.Fatalf("the table's data files:\n%s\nwant each shipped Parquet file once:\n%s", strings.Join(got, "\n"), strings.Join(keys, "\n"))
	}
	for _, s := range tbl.Snapshots() {
		if n, _ := strconv.Atoi(s.Summary.Properties["added-data-files"]); n > most || n == 0 {
			t.Errorf("snapshot %d added %d files, want 1 to %d (commit_files)", s.SnapshotID, n, most)
		}
	}
	at, err := tbl.Iceberg().Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	scan, err := icebird.FromArrow(at)
	if err != nil {
		t.Fatal(err)
	}
	if err := icebird.Compare(want, scan); err != nil {
		t.Fatalf("iceberg-go's scan of the table: %v", err)
	}
	if os.Getenv("WHARF_TEST_ICEBIRD") == "" && !testenv.Required() {
		return
	}
	sub := st.Sub("wharf/v1/" + cfg.Pipeline + "/" + files[0].Dataset)
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := icebird.RecodeManifests(rctx, sub); err != nil {
		t.Fatal(err)
	}
	// The version the Table holds: a table a catalog keeps has no version hint to follow.
	read, err := icebird.Read(rctx, sub, icebird.Options{Dir: testenv.Icebird(t), Values: true, Metadata: path.Base(tbl.MetadataLocation())})
	if err != nil {
		t.Fatal(err)
	}
	if err := icebird.Compare(want, read); err != nil {
		t.Fatalf("icebird's read of the table: %v", err)
	}
}

// tableStores are where the ship tests commit tables: a folder, and MinIO.
var tableStores = []struct {
	name string
	open func(t *testing.T) (string, store.Config, *store.Store)
}{
	{"file", func(t *testing.T) (string, store.Config, *store.Store) {
		url := "file://" + t.TempDir() + "/landing"
		sc := store.Config{CreateDir: true}
		st, err := store.Open(t.Context(), url, &sc)
		if err != nil {
			t.Fatal(err)
		}
		return url, sc, st
	}},
	{"minio", func(t *testing.T) (string, store.Config, *store.Store) { return minioDest(t, testenv.MinIO(t)) }},
}

// TestTableShip: the Parquet files of a dataset are committed to its table in group commits
// of at most commit_files, each file once; other datasets and files that are not Parquet are
// shipped and left out; a file's local copy is removed only after its commit; a second run
// commits nothing again. Read back by iceberg-go's scan and by icebird.
func TestTableShip(t *testing.T) {
	for _, h := range tableStores {
		t.Run(h.name, func(t *testing.T) {
			url, sc, st := h.open(t)
			fx := newFixture(t)
			schema := rowsSchema(false)
			var files []spool.File
			var ranges [][2]int64
			for i := range int64(7) {
				files = append(files, fx.addParquet(t, "events", schema, i*100, 40+i))
				ranges = append(ranges, [2]int64{i * 100, 40 + i})
				if i == 3 {
					fx.add(t, "events", 50)  // not Parquet: shipped, not committed
					fx.add(t, "metrics", 60) // another dataset
				}
			}
			cfg := minioConfig(fx, url, sc)
			cfg.Iceberg.Datasets = Names{"events"}
			cfg.Iceberg.CommitFiles = 3
			s, err := runToEnd(t, cfg, Options{Logger: testLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			want := expected(t, schema, ranges...)
			tbl := tableAt(t, st, cfg, "events")
			checkTable(t, st, cfg, tbl, files, fx.epoch(t), want, 3)
			if n := fx.readyFiles(t); n != 0 {
				t.Errorf("%d files left in ready/ after the drain, want none (delete_after_upload, after the commit)", n)
			}
			ts := s.Status().Tables
			if len(ts) != 1 || ts[0].Committed != 7 || ts[0].Waiting != 0 || ts[0].Version != tbl.Version() {
				t.Errorf("status tables %+v, want 7 committed, none waiting, version %d", ts, tbl.Version())
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
			if !strings.Contains(rec.Body.String(), `wharf_ship_table_files_total{dataset="events"} 7`) {
				t.Errorf("/metrics lacks 7 files committed")
			}
			rec = httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			if page := rec.Body.String(); !strings.Contains(page, `<dd data-k="table_events_committed">7</dd>`) {
				t.Errorf("the status page lacks the table's 7 files committed")
			}
			snaps := len(tbl.Snapshots())
			if _, err := runToEnd(t, cfg, Options{Logger: testLogger(t)}); err != nil {
				t.Fatal(err)
			}
			if n := len(tableAt(t, st, cfg, "events").Snapshots()); n != snaps {
				t.Errorf("a second run made %d snapshots of nothing new", n-snaps)
			}
		})
	}
}

// lostAnswer passes the first put of a commit's metadata file to the store and then fails
// it, as a connection cut before the answer would: the commit is in the table, and its
// writer does not know.
type lostAnswer struct {
	driver.Bucket
	lost atomic.Int32
}

func (l *lostAnswer) Unwrap() driver.Bucket { return l.Bucket }

func (l *lostAnswer) Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error) {
	info, err := l.Bucket.Put(ctx, key, body, opts)
	if err == nil && strings.HasSuffix(key, "/metadata/v2.metadata.json") && l.lost.Add(1) == 1 {
		return store.ObjectInfo{}, &store.Error{Op: "put", Key: key, Kind: store.ErrUnavailable, Err: errors.New("connection reset after the request was sent")}
	}
	return info, err
}

// TestTableShipKeepsCommitsOnce: a commit whose answer is lost is retried as it was and
// found in the table (outcome already), and a restart whose spool still holds every file
// (local_retention keep) learns from the table which are in it, and commits only the files
// added since: each file once.
func TestTableShipKeepsCommitsOnce(t *testing.T) {
	fx := newFixture(t)
	schema := rowsSchema(false)
	files := fx.addParquets(t, 4, 10)
	var lost *lostAnswer
	dir, st := wrappedFolder(t, func(b driver.Bucket) driver.Bucket { lost = &lostAnswer{Bucket: b}; return lost })
	cfg := fx.config("file://" + dir)
	cfg.Iceberg.Datasets = Names{"events"}
	cfg.Retention.Mode = Keep
	s, err := runToEnd(t, cfg, options(t, st))
	if err != nil {
		t.Fatal(err)
	}
	if lost.lost.Load() < 1 {
		t.Fatal("no commit's answer was lost: the test tested nothing")
	}
	want := expected(t, schema, [2]int64{0, 40})
	tbl := tableAt(t, st, cfg, "events")
	checkTable(t, st, cfg, tbl, files, fx.epoch(t), want, 100)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `wharf_ship_table_commits_total{dataset="events",outcome="already"} 1`) {
		t.Errorf("/metrics: want one commit found already in the table:\n%s", grepLines(rec.Body.String(), "table_commits"))
	}
	if n := fx.readyFiles(t); n != 4 {
		t.Fatalf("%d files in ready/, want the 4 kept", n)
	}
	// Two more files: the restart's files to commit are the two, not a group of six whose
	// id no snapshot carries.
	snaps := len(tbl.Snapshots())
	for i := range int64(2) {
		files = append(files, fx.addParquet(t, "events", schema, 40+i*10, 10))
	}
	s, err = runToEnd(t, cfg, options(t, st))
	if err != nil {
		t.Fatal(err)
	}
	tbl = tableAt(t, st, cfg, "events")
	checkTable(t, st, cfg, tbl, files, fx.epoch(t), expected(t, schema, [2]int64{0, 60}), 100)
	if n := len(tbl.Snapshots()); n != snaps+1 || s.Status().Tables[0].Committed != 2 {
		t.Errorf("the restart: %d snapshots (was %d), %d files committed; want one snapshot of the 2 new files", n, snaps, s.Status().Tables[0].Committed)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestTableShipSchema: a file with a new column evolves the table's schema; a file whose
// column changed type is left out of the table, named and counted, and still shipped.
func TestTableShipSchema(t *testing.T) {
	fx := newFixture(t)
	dir := t.TempDir()
	fx.addParquet(t, "events", rowsSchema(false), 0, 10)
	fx.addParquet(t, "events", rowsSchema(true), 10, 5)
	bad := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, bad)
	b.Field(0).(*array.StringBuilder).Append("x")
	rec := b.NewRecordBatch()
	b.Release()
	var buf bytes.Buffer
	tb := array.NewTableFromRecords(bad, []arrow.RecordBatch{rec})
	if err := pqarrow.WriteTable(tb, &buf, 10, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	tb.Release()
	rec.Release()
	src := filepath.Join(t.TempDir(), "bad.parquet")
	if err := os.WriteFile(src, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	badFile, err := spool.Add(t.Context(), fx.dir, src, spool.AddOptions{Dataset: "events", Time: eventTime, Clock: spool.ClockSynced})
	if err != nil {
		t.Fatal(err)
	}
	cfg := fx.config("file://" + dir)
	cfg.Store.CreateDir = true
	cfg.Iceberg.Datasets = Names{"events"}
	s, err := runToEnd(t, cfg, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), "file://"+dir, &store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tbl := tableAt(t, st, cfg, "events")
	if f, ok := tbl.Schema().FindFieldByName("note"); !ok || f.Required {
		t.Errorf("the table's schema %s: want note added, optional", tbl.Schema())
	}
	at, err := tbl.Iceberg().Scan().ToArrowTable(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	if at.NumRows() != 15 {
		t.Errorf("the table has %d rows, want 15 (10 + 5 with the new column)", at.NumRows())
	}
	ts := s.Status().Tables[0]
	if ts.Rejected != 1 || ts.Committed != 2 {
		t.Errorf("status %+v: want 2 committed, 1 rejected", ts)
	}
	last := s.Status().LastError
	if last == nil || last.Code != "WHARF_ICEBERG_SCHEMA_CHANGED" || last.FileID != badFile.ID || !strings.Contains(last.Message, `"id"`) {
		t.Errorf("last error %+v: want the file left out, its column named", last)
	}
	if _, err := st.Head(t.Context(), fx.key(t, cfg, badFile)); err != nil {
		t.Errorf("the file left out of the table is not shipped: %v", err)
	}
}

// TestTableShipNeedsConditions: on a store that ignores conditions the service refuses to
// start (WHARF_COORDINATION_UNPROVEN) before it ships anything.
func TestTableShipNeedsConditions(t *testing.T) {
	fx := newFixture(t)
	fx.addParquet(t, "events", rowsSchema(false), 0, 3)
	st := store.New(noConditions{Bucket: newMem().Bucket()}, nil)
	cfg := fx.config("mem://x")
	cfg.Iceberg.Datasets = Names{"events"}
	_, err := runToEnd(t, cfg, options(t, st))
	if !errors.Is(err, probe.ErrCoordinationUnproven) {
		t.Fatalf("Run = %v, want WHARF_COORDINATION_UNPROVEN", err)
	}
	if objs, _ := st.ListAll(t.Context(), "wharf/"); len(objs) != 0 {
		t.Errorf("%d objects shipped before the refusal", len(objs))
	}
}

// The ranges a commit id writes: consecutive files run together, and each file is found in
// them, no other.
func TestTableRanges(t *testing.T) {
	files := []spool.File{{First: 1, Last: 4}, {First: 5, Last: 5}, {First: 9, Last: 12}, {First: 20, Last: 20}}
	got := formatRanges(files)
	if got != "1-5,9-12,20-20" {
		t.Fatalf("formatRanges = %q", got)
	}
	done := parseRanges(got + ",bad,7-3")
	for _, f := range files {
		if !covered(done, f) {
			t.Errorf("file %d-%d not found in %q", f.First, f.Last, got)
		}
	}
	for _, f := range []spool.File{{First: 6, Last: 8}, {First: 13, Last: 19}, {First: 21, Last: 21}, {First: 12, Last: 13}} {
		if covered(done, f) {
			t.Errorf("file %d-%d found in %q", f.First, f.Last, got)
		}
	}
}

// TestTableShipAfterExpiry: snapshots expired from the table take the commit ids of the files
// they held with them. A restart whose spool still holds such files (local_retention keep)
// does not commit them again, which would put them in the table twice: it leaves them out and
// names them; a file whose commit is in the history left is known as before.
func TestTableShipAfterExpiry(t *testing.T) {
	fx := newFixture(t)
	schema := rowsSchema(false)
	files := fx.addParquets(t, 3, 10)
	dir := t.TempDir()
	cfg := fx.config("file://" + dir)
	cfg.Store.CreateDir = true
	cfg.Iceberg.Datasets = Names{"events"}
	cfg.Iceberg.CommitFiles = 1
	cfg.Retention.Mode = Keep
	if _, err := runToEnd(t, cfg, Options{Logger: testLogger(t)}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), "file://"+dir, &store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tbl := tableAt(t, st, cfg, "events")
	if n := len(tbl.Snapshots()); n != 3 {
		t.Fatalf("%d snapshots, want one per file (commit_files 1)", n)
	}
	tx := tbl.Iceberg().NewTransaction()
	if err := tx.ExpireSnapshots(icegotable.WithRetainLast(1), icegotable.WithOlderThan(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	tbl = tableAt(t, st, cfg, "events")
	if n := len(tbl.Snapshots()); n != 1 {
		t.Fatalf("%d snapshots after the expiry, want 1", n)
	}
	s, err := runToEnd(t, cfg, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	tbl = tableAt(t, st, cfg, "events")
	checkTable(t, st, cfg, tbl, files, fx.epoch(t), expected(t, schema, [2]int64{0, 30}), 1)
	if n := len(tbl.Snapshots()); n != 1 {
		t.Errorf("the restart committed %d snapshot(s) of files already in the table", n-1)
	}
	ts := s.Status().Tables[0]
	if ts.Rejected != 2 || ts.Committed != 0 {
		t.Errorf("status %+v: want the 2 files whose commits expired left out, nothing committed", ts)
	}
	if last := s.Status().LastError; last == nil || !strings.Contains(last.Message, "expired") {
		t.Errorf("last error %+v: want the file left out named, and why", last)
	}
}

// TestTableShipTwoNodes: two machines (two spools, two node ids) ship one dataset into the
// same table on MinIO at once, a commit per file: their commits race for each next version,
// the losers rebase and retry, and the table ends with every file of both exactly once.
func TestTableShipTwoNodes(t *testing.T) {
	url, sc, st := minioDest(t, testenv.MinIO(t))
	schema := rowsSchema(false)
	type node struct {
		fx    *fixture
		cfg   Config
		files []spool.File
	}
	var nodes []*node
	var ranges [][2]int64
	for i, name := range []string{"gw-1", "gw-2"} {
		n := &node{fx: newFixture(t)}
		for j := range int64(8) {
			from := int64(i)*1000 + j*10
			n.files = append(n.files, n.fx.addParquet(t, "events", schema, from, 10))
			ranges = append(ranges, [2]int64{from, 10})
		}
		n.cfg = minioConfig(n.fx, url, sc)
		n.cfg.Node = name
		n.cfg.Iceberg.Datasets = Names{"events"}
		n.cfg.Iceberg.CommitFiles = 1
		nodes = append(nodes, n)
	}
	errs := make(chan error, len(nodes))
	for _, n := range nodes {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			s, err := New(n.cfg, Options{Logger: testLogger(t)})
			if err == nil {
				err = s.Run(ctx)
			}
			errs <- err
		}()
	}
	for range nodes {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	tbl := tableAt(t, st, nodes[0].cfg, "events")
	dfs, err := tbl.DataFiles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, df := range dfs {
		seen[df.FilePath()]++
	}
	for _, n := range nodes {
		for _, f := range n.files {
			key := strings.TrimRight(tbl.Location(), "/") + "/" + strings.TrimPrefix(ObjectKey(n.cfg.Pipeline, n.cfg.Node, n.fx.epoch(t), f), "wharf/v1/edge/events/")
			if seen[key] != 1 {
				t.Errorf("%s is in the table %d times, want once", key, seen[key])
			}
		}
	}
	if len(dfs) != 16 || len(tbl.Snapshots()) != 16 {
		t.Errorf("%d data files in %d snapshots, want 16 in 16 (one commit per file)", len(dfs), len(tbl.Snapshots()))
	}
	at, err := tbl.Iceberg().Scan().ToArrowTable(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	got, err := icebird.FromArrow(at)
	if err != nil {
		t.Fatal(err)
	}
	if err := icebird.Compare(expected(t, schema, ranges...), got); err != nil {
		t.Fatalf("the table both nodes committed to: %v", err)
	}
}

// TestTableShipCatalog: with iceberg.catalog the tables are kept in a SQL catalog (SQLite
// here) as {pipeline}.{dataset}, so a store that enforces no condition at all serves: the
// service ships with plain puts and the database makes each commit's compare-and-set.
func TestTableShipCatalog(t *testing.T) {
	fx := newFixture(t)
	schema := rowsSchema(false)
	files := fx.addParquets(t, 5, 10)
	dir, st := wrappedFolder(t, func(b driver.Bucket) driver.Bucket { return noConditions{Bucket: b} })
	cfg := fx.config("file://" + dir)
	cfg.Iceberg.Datasets = Names{"events"}
	cfg.Iceberg.CommitFiles = 2
	cfg.Iceberg.Catalog = &iceberg.CatalogConfig{URI: "sqlite://" + filepath.Join(t.TempDir(), "catalog.db")}
	s, err := runToEnd(t, cfg, options(t, st))
	if err != nil {
		t.Fatal(err)
	}
	if s.Status().PutMode != PutOverwrite {
		t.Errorf("put mode %q on a store without conditions, want overwrite", s.Status().PutMode)
	}
	cat, err := iceberg.OpenCatalog(t.Context(), cfg.Iceberg.Catalog, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := iceberg.Load(t.Context(), st.Sub("wharf/v1/edge/events"), &iceberg.Options{Catalog: cat, Ident: iceberg.Ident{Namespace: "edge", Name: "events"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tbl.MetadataLocation(), "/metadata/00004-") {
		t.Errorf("the catalog names %s, want the fourth version (a create, then 3 commits of at most 2 files)", tbl.MetadataLocation())
	}
	checkTable(t, st, cfg, tbl, files, fx.epoch(t), expected(t, schema, [2]int64{0, 50}), 2)
}

// racing runs race once, before the first Avro file (a commit's manifest) is put below a
// metadata/ directory: another machine's commit landing between a load and a commit.
type racing struct {
	driver.Bucket
	once sync.Once
	race func()
}

func (r *racing) Unwrap() driver.Bucket { return r.Bucket }

func (r *racing) Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error) {
	if strings.Contains(key, "/metadata/") && strings.HasSuffix(key, ".avro") {
		r.once.Do(r.race)
	}
	return r.Bucket.Put(ctx, key, body, opts)
}

// TestTableShipSchemaChangedUnderTheGroup: a group whose schema the table could take when
// the service loaded it, but not after another writer's commit that lands in between (note
// added as a long, the group's files hold it as a string), is left out, each file named and
// counted, once: not retried for ever, not committed, and shipped all the same.
func TestTableShipSchemaChangedUnderTheGroup(t *testing.T) {
	ctx := t.Context()
	fx := newFixture(t)
	mine := []spool.File{fx.addParquet(t, "events", rowsSchema(true), 0, 5), fx.addParquet(t, "events", rowsSchema(true), 5, 5)}
	rc := &racing{}
	dir, st := wrappedFolder(t, func(b driver.Bucket) driver.Bucket { rc.Bucket = b; return rc })
	cfg := fx.config("file://" + dir)
	cfg.Iceberg.Datasets = Names{"events"}
	plain, err := store.Open(ctx, "file://"+dir, &store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	root := plain.Sub("wharf/v1/" + cfg.Pipeline + "/events")
	if _, err := iceberg.Open(ctx, root, rowsSchema(false), nil); err != nil {
		t.Fatal(err)
	}
	other := arrow.NewSchema(append(rowsSchema(false).Fields(), arrow.Field{Name: "note", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), nil)
	rc.race = func() {
		b := array.NewRecordBuilder(memory.DefaultAllocator, other)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).Append(100)
		b.Field(1).(*array.StringBuilder).Append("other")
		b.Field(2).(*array.Float64Builder).Append(1)
		b.Field(3).(*array.Int64Builder).Append(7)
		rec := b.NewRecordBatch()
		defer rec.Release()
		tb := array.NewTableFromRecords(other, []arrow.RecordBatch{rec})
		defer tb.Release()
		var buf bytes.Buffer
		if err := pqarrow.WriteTable(tb, &buf, 10, nil, pqarrow.DefaultWriterProps()); err != nil {
			t.Error(err)
			return
		}
		if _, err := root.Put(ctx, "other/x.parquet", bytes.NewReader(buf.Bytes()), &store.PutOptions{Size: int64(buf.Len())}); err != nil {
			t.Error(err)
			return
		}
		w, err := iceberg.Load(ctx, root, nil)
		if err == nil {
			_, err = w.Commit(ctx, iceberg.Change{ID: "other", Files: []iceberg.File{{Path: "other/x.parquet"}}, Schema: other})
		}
		if err != nil {
			t.Errorf("the other writer's commit: %v", err)
		}
	}

	s, err := runToEnd(t, cfg, options(t, st))
	if err != nil {
		t.Fatal(err)
	}
	tbl := tableAt(t, plain, cfg, "events")
	files, err := tbl.DataFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || !strings.HasSuffix(files[0].FilePath(), "/other/x.parquet") || !tbl.Has("other") {
		t.Errorf("the table holds %d files (%v): want the other writer's alone", len(files), files)
	}
	ts := s.Status().Tables[0]
	if ts.Rejected != 2 || ts.Committed != 0 {
		t.Errorf("status %+v: want the group's 2 files rejected, none committed", ts)
	}
	last := s.Status().LastError
	if last == nil || last.Code != "WHARF_ICEBERG_SCHEMA_CHANGED" || !strings.Contains(last.Message, `"note"`) {
		t.Errorf("last error %+v: want the group left out, its column named", last)
	}
	for _, f := range mine {
		if _, err := plain.Head(ctx, fx.key(t, cfg, f)); err != nil {
			t.Errorf("file %d, left out of the table, is not shipped: %v", f.ID, err)
		}
	}
}
