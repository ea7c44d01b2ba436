package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icego "github.com/apache/iceberg-go"

	"github.com/wharfdata/wharf/iceberg"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// putParquet writes rows (id, name) as a Parquet file at key of s.
func putParquet(t *testing.T, s *store.Store, key string, ids []int64) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row-%d", id))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(sc, &buf, nil, pqarrow.DefaultWriterProps())
	must(t, err)
	must(t, w.Write(rec))
	must(t, w.Close())
	_, err = s.Put(context.Background(), key, bytes.NewReader(buf.Bytes()), &store.PutOptions{Size: int64(buf.Len())})
	must(t, err)
}

// TestE2ETableShow: `wharf table show` of a table on the folder store and on MinIO, made by
// package iceberg with an append and an overwrite: its schema, both snapshots (the second's
// parent the first) and the current data files, as text and as JSON; no table is
// WHARF_ICEBERG_NO_TABLE.
func TestE2ETableShow(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "warehouse", "orders")
		must(t, os.MkdirAll(dir, 0o755)) // an empty folder: no table (a missing one is WHARF_BUCKET_MISSING)
		checkTableShow(t, cli{}, nil, "file://"+dir, &store.Config{CreateDir: true})
	})
	t.Run("minio", func(t *testing.T) {
		c, ep := minioCLI(t)
		srv := testenv.MinIO(t)
		bucket := randomBucket(t)
		cfg := srv.StoreConfig(t)
		root, err := store.Open(context.Background(), "s3://"+bucket, cfg)
		must(t, err)
		defer root.Close()
		must(t, root.MakeBucket(context.Background()))
		srv.RemoveBucketOnCleanup(t, bucket)
		checkTableShow(t, c, ep, "s3://"+bucket+"/lake/orders", cfg)
	})
}

func checkTableShow(t *testing.T, c cli, ep []string, url string, cfg *store.Config) {
	ctx := context.Background()
	s, err := store.Open(ctx, url, cfg)
	must(t, err)
	defer s.Close()
	r := c.run(t, append(ep, "table", "show", url)...)
	if r.code != 1 || !strings.Contains(r.err, "[WHARF_ICEBERG_NO_TABLE]") {
		t.Fatalf("show before the table exists: exit %d, stderr %s; want 1 and WHARF_ICEBERG_NO_TABLE", r.code, r.err)
	}
	schema := icego.NewSchema(0, icego.NestedField{ID: 1, Name: "id", Type: icego.PrimitiveTypes.Int64},
		icego.NestedField{ID: 2, Name: "name", Type: icego.PrimitiveTypes.String})
	tbl, err := iceberg.Create(ctx, s, schema, nil)
	must(t, err)
	putParquet(t, s, "data/a.parquet", []int64{1, 2, 3})
	putParquet(t, s, "data/b.parquet", []int64{4, 5})
	must(t, tbl.Append(ctx, []string{"data/a.parquet", "data/b.parquet"}))
	putParquet(t, s, "data/c.parquet", []int64{6, 7, 8, 9})
	must(t, tbl.Overwrite(ctx, []string{"data/c.parquet"}))

	r = c.run(t, append(ep, "--format", "json", "table", "show", url)...).must(t, 0)
	var d iceberg.Description
	must(t, json.Unmarshal([]byte(r.out), &d))
	if len(d.Snapshots) != 2 || d.Snapshots[0].Operation != "append" || d.Snapshots[1].Operation != "overwrite" ||
		d.Snapshots[1].Parent != d.Snapshots[0].ID || d.CurrentID != d.Snapshots[1].ID {
		t.Errorf("snapshots %+v, current %d: want an append, then an overwrite on top of it, current", d.Snapshots, d.CurrentID)
	}
	if len(d.DataFiles) != 1 || !strings.HasSuffix(d.DataFiles[0].Path, "/data/c.parquet") || d.DataFiles[0].Records != 4 || d.DataFiles[0].Bytes == 0 {
		t.Errorf("data files %+v: want data/c.parquet alone, 4 records", d.DataFiles)
	}
	if len(d.Schema) != 2 || d.Schema[0] != (iceberg.Field{ID: 1, Name: "id", Type: "long"}) || d.Schema[1].Name != "name" {
		t.Errorf("schema %+v", d.Schema)
	}
	if d.Version != tbl.Version() || d.Version < 3 || d.Location != tbl.Location() {
		t.Errorf("version %d at %s; the table is at v%d, %s", d.Version, d.Location, tbl.Version(), tbl.Location())
	}
	r = c.run(t, append(ep, "table", "show", url)...).must(t, 0)
	for _, want := range []string{"1 file(s), 4 record(s)", "append", "overwrite", "data/c.parquet", "  1  id", "  2  name"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("table show lacks %q:\n%s", want, r.out)
		}
	}
}
