package iceberg

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icego "github.com/apache/iceberg-go"

	"github.com/wharfdata/wharf/internal/icebird"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// The icebird tables' schema: the types wharf's exports write, each column nullable but id.
var (
	icebirdSchema = icego.NewSchema(0,
		icego.NestedField{ID: 1, Name: "id", Type: icego.PrimitiveTypes.Int64, Required: true},
		icego.NestedField{ID: 2, Name: "name", Type: icego.PrimitiveTypes.String},
		icego.NestedField{ID: 3, Name: "score", Type: icego.PrimitiveTypes.Float64},
		icego.NestedField{ID: 4, Name: "at", Type: icego.PrimitiveTypes.TimestampTz},
		icego.NestedField{ID: 5, Name: "day", Type: icego.PrimitiveTypes.Date},
		icego.NestedField{ID: 6, Name: "ok", Type: icego.PrimitiveTypes.Bool},
		icego.NestedField{ID: 7, Name: "amount", Type: icego.DecimalTypeOf(18, 2)},
	)
	icebirdArrow = arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 18, Scale: 2}, Nullable: true},
	}, nil)
)

// icebirdRows builds the rows ids [from, from+n) of icebirdSchema: each a function of its id,
// a null in a different column every few rows, timestamps on whole milliseconds (icebird
// reads no finer; see internal/icebird).
func icebirdRows(from, n int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, icebirdArrow)
	defer b.Release()
	for id := from; id < from+n; id++ {
		null := func(col int64) bool { return id%7 == col }
		b.Field(0).(*array.Int64Builder).Append(id)
		appendIf(b.Field(1), !null(1), func() { b.Field(1).(*array.StringBuilder).Append("row " + strconv.FormatInt(id, 10) + " ☃") })
		appendIf(b.Field(2), !null(2), func() { b.Field(2).(*array.Float64Builder).Append(float64(id) / 3) })
		at := epoch.Add(time.Duration(id)*time.Hour + time.Duration(id)*time.Millisecond)
		appendIf(b.Field(3), !null(3), func() { b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(at.UnixMicro())) })
		appendIf(b.Field(4), !null(4), func() { b.Field(4).(*array.Date32Builder).Append(arrow.Date32FromTime(at)) })
		appendIf(b.Field(5), !null(5), func() { b.Field(5).(*array.BooleanBuilder).Append(id%2 == 0) })
		appendIf(b.Field(6), !null(6), func() { b.Field(6).(*array.Decimal128Builder).Append(decimal128.FromI64(id*1001 - 50_000)) })
	}
	return b.NewRecordBatch()
}

func appendIf(b array.Builder, ok bool, add func()) {
	if ok {
		add()
	} else {
		b.AppendNull()
	}
}

// writeIcebirdRows writes icebirdRows(from, n) at key as a zstd-compressed Parquet file.
func writeIcebirdRows(t testing.TB, st *store.Store, key string, from, n int64) string {
	t.Helper()
	rec := icebirdRows(from, n)
	defer rec.Release()
	tbl := array.NewTableFromRecords(icebirdArrow, []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	if err := pqarrow.WriteTable(tbl, &buf, 1024, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), key, bytes.NewReader(buf.Bytes()), &store.PutOptions{Size: int64(buf.Len())}); err != nil {
		t.Fatal(err)
	}
	return key
}

// expectRows is the icebird.Result of the rows of the given [from, from+n) ranges.
func expectRows(t testing.TB, ranges ...[2]int64) *icebird.Result {
	t.Helper()
	var recs []arrow.RecordBatch
	for _, r := range ranges {
		recs = append(recs, icebirdRows(r[0], r[1]))
	}
	tbl := array.NewTableFromRecords(icebirdArrow, recs)
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

// scanResult is the icebird.Result of iceberg-go's own scan of tbl.
func scanResult(t testing.TB, tbl *Table) *icebird.Result {
	t.Helper()
	at, err := tbl.Iceberg().Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	r, err := icebird.FromArrow(at)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// icebirdRead reads the table st holds with icebird, after rewriting its manifests without
// deflate (icebird 0.3.1 cannot inflate iceberg-go's: see internal/icebird).
func icebirdRead(t testing.TB, st *store.Store, opts icebird.Options) *icebird.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := icebird.RecodeManifests(ctx, st); err != nil {
		t.Fatal(err)
	}
	opts.Dir, opts.Values = testenv.Icebird(t), true
	got, err := icebird.Read(ctx, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// icebirdStores are the stores the icebird test runs on: a folder, and MinIO when the test
// servers run (read by presigned URLs).
var icebirdStores = []harness{
	{"file", func(t testing.TB) (string, *store.Config) {
		return "file://" + t.TempDir() + "/tables/t", &store.Config{CreateDir: true}
	}},
	{"minio", func(t testing.TB) (string, *store.Config) {
		srv := testenv.MinIO(t)
		cfg := srv.StoreConfig(t)
		bucket := fmt.Sprintf("wharf-icebird-%d-%d", os.Getpid(), bucketSeq.Add(1))
		if err := openStore(t, "s3://"+bucket, cfg).MakeBucket(context.Background()); err != nil {
			t.Fatal(err)
		}
		srv.RemoveBucketOnCleanup(t, bucket)
		return "s3://" + bucket + "/tables/t", cfg
	}},
}

// A table committed by Create, Append and Overwrite is read by icebird as the rows written and
// as iceberg-go's own scan reads them: the current version after the second append and after
// the overwrite, the first append by its metadata file; and icebird follows the version hint,
// even one that lags.
func TestIcebirdReadsCommits(t *testing.T) {
	testenv.Icebird(t)
	for _, h := range icebirdStores {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			url, cfg := h.open(t)
			st := openStore(t, url, cfg)
			tbl, err := Create(ctx, st, icebirdSchema, nil)
			if err != nil {
				t.Fatal(err)
			}
			check := func(what string, want *icebird.Result, got *icebird.Result) {
				t.Helper()
				if err := icebird.Compare(want, got); err != nil {
					t.Fatalf("%s: icebird read of %s: %v", what, got.Metadata, err)
				}
				if err := icebird.Compare(scanResult(t, tbl), got); err != nil {
					t.Fatalf("%s: icebird and iceberg-go's scan differ: %v", what, err)
				}
				for _, u := range got.Fetched {
					if _, err := tbl.FileIO().Key(u); err != nil {
						t.Errorf("%s: icebird fetched %s: %v", what, u, err)
					}
				}
			}

			a := writeIcebirdRows(t, st, "data/a.parquet", 0, 20)
			b := writeIcebirdRows(t, st, "data/b.parquet", 20, 15)
			if err := tbl.Append(ctx, []string{a, b}); err != nil {
				t.Fatal(err)
			}
			firstScan := scanResult(t, tbl)

			c := writeIcebirdRows(t, st, "data/c.parquet", 35, 10)
			if err := tbl.Append(ctx, []string{c}); err != nil {
				t.Fatal(err)
			}
			check("second append", expectRows(t, [2]int64{0, 45}), icebirdRead(t, st, icebird.Options{}))

			d := writeIcebirdRows(t, st, "data/d.parquet", 100, 12)
			if err := tbl.Overwrite(ctx, []string{d, c}); err != nil {
				t.Fatal(err)
			}
			got := icebirdRead(t, st, icebird.Options{})
			check("overwrite", expectRows(t, [2]int64{100, 12}, [2]int64{35, 10}), got)
			if got.Metadata != "v4.metadata.json" {
				t.Errorf("icebird read %s, want v4.metadata.json", got.Metadata)
			}

			// The first append, by its metadata file.
			first := icebirdRead(t, st, icebird.Options{Metadata: "v2.metadata.json"})
			if err := icebird.Compare(expectRows(t, [2]int64{0, 35}), first); err != nil {
				t.Errorf("v2.metadata.json: %v", err)
			}
			if err := icebird.Compare(firstScan, first); err != nil {
				t.Errorf("v2.metadata.json: icebird and iceberg-go's scan differ: %v", err)
			}

			// A hint that lags (a crash between a commit and its hint): wharf searches upward
			// from it, icebird reads the version it names.
			if _, err := st.Put(ctx, "metadata/version-hint.text", bytes.NewReader([]byte("3")), nil); err != nil {
				t.Fatal(err)
			}
			lagging := icebirdRead(t, st, icebird.Options{})
			if lagging.Metadata != "v3.metadata.json" || icebird.Compare(expectRows(t, [2]int64{0, 45}), lagging) != nil {
				t.Errorf("with the hint at 3, icebird read %d rows of %s, want the 45 of v3.metadata.json", lagging.Rows, lagging.Metadata)
			}
			if loaded, err := Load(ctx, st, nil); err != nil {
				t.Error(err)
			} else if loaded.Version() != 4 {
				t.Errorf("with the hint at 3, Load read version %d, want 4", loaded.Version())
			}
		})
	}
}
