package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/wharfdata/wharf/dataset"
)

func TestRunWritesPartsManifestSuccess(t *testing.T) {
	f := newFixture(t, 100, 30)
	res := f.mustRun(t)
	if res.Status != StatusSucceeded || res.Rows != 100 || len(res.Parts) != 4 {
		t.Fatalf("result: status %s rows %d parts %d", res.Status, res.Rows, len(res.Parts))
	}
	v := f.validate(t, true)
	if !v.Certified || v.LegacyRun || v.Rows != 100 {
		t.Fatalf("not certified: %+v", v.Problems)
	}
	var total int64
	for _, p := range res.Parts {
		total += readParquetRows(t, filepath.Join(f.prefix(), p.Key))
	}
	if total != 100 {
		t.Fatalf("parquet parts hold %d rows, want 100", total)
	}
	b, _ := os.ReadFile(filepath.Join(f.prefix(), dataset.ManifestKey))
	m, err := dataset.DecodeManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Schema[2].Type != "decimal(10, 2)" || m.Schema[8].Type != "extension<arrow.json[storage_type=utf8]>" || m.Schema[9].Type != "extension<arrow.uuid>" {
		t.Fatalf("schema: %+v", m.Schema)
	}
}

func readParquetRows(t *testing.T, path string) int64 {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	return tbl.NumRows()
}

func TestRunFormats(t *testing.T) {
	for _, format := range []Format{FormatNDJSON, FormatCSV} {
		t.Run(string(format), func(t *testing.T) {
			f := newFixture(t, 20, 100)
			f.exp.Format = format
			res := f.mustRun(t)
			b, err := os.ReadFile(filepath.Join(f.prefix(), res.Parts[0].Key))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			want := 20
			if format == FormatCSV {
				want = 21 // header
			}
			if len(lines) != want {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), want, b)
			}
			if format == FormatNDJSON && !strings.Contains(lines[0], `"doc":{"i":1}`) {
				t.Fatalf("json column not embedded: %s", lines[0])
			}
			if !f.validate(t, true).Certified {
				t.Fatal("not certified")
			}
		})
	}
}

func TestBadSourceTouchesNothing(t *testing.T) {
	f := newFixture(t, 10, 5)
	f.mustRun(t)
	before := snapshot(t, f.dir)
	cases := []struct {
		name   string
		change func(e *Export)
		kind   error
		names  string
	}{
		{"missing table", func(e *Export) { e.Table = "nope" }, ErrSourceNotFound, "nope"},
		{"missing chunk key", func(e *Export) { e.ChunkKey = "nokey" }, ErrSourceNotFound, "nokey"},
		{"text chunk key", func(e *Export) { e.ChunkKey = "name" }, ErrChunkKey, "TEXT"},
		{"missing db", func(e *Export) { e.Source = "sqlite:///no/such.db" }, ErrSourceUnavailable, "/no/such.db"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := f.exp
			c.change(&f.exp)
			defer func() { f.exp = e }()
			_, err := f.run(t, f.opts())
			if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.names) {
				t.Fatalf("err = %v, want %v naming %s", err, c.kind, c.names)
			}
			after := snapshot(t, f.dir)
			if len(after) != len(before) {
				t.Fatalf("prefix changed: %d files, was %d", len(after), len(before))
			}
			for k, v := range before {
				if after[k] != v {
					t.Fatalf("%s changed", k)
				}
			}
		})
	}
	if !f.validate(t, false).Certified {
		t.Fatal("previous export no longer certified")
	}
}

func TestFailedFirstRunLeavesFailedManifest(t *testing.T) {
	f := newFixture(t, 10, 5)
	f.exp.Table = "nope"
	if _, err := f.run(t, f.opts()); !errors.Is(err, ErrSourceNotFound) {
		t.Fatalf("err = %v", err)
	}
	v := f.validate(t, false)
	if v.Certified || v.LegacyRun || v.Status != StatusFailed || v.Parts != 0 || !hasProblem(v, dataset.ProblemRunFailed) {
		t.Fatalf("validation: %+v", v)
	}
	if _, err := os.Stat(filepath.Join(f.prefix(), dataset.SuccessKey)); !os.IsNotExist(err) {
		t.Fatal("_SUCCESS written by a failed run")
	}
	j, _ := OpenJournal(context.Background(), f.state)
	defer j.Close()
	last, _ := j.LastRun(context.Background(), "orders")
	if last == nil || last.Status != StatusFailed || !strings.Contains(last.Error, "nope") {
		t.Fatalf("journal: %+v", last)
	}
}

func TestDemoExportToMem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.db")
	ctx := context.Background()
	if err := CreateDemo(ctx, path, 1000); err != nil {
		t.Fatal(err)
	}
	if err := CreateDemo(ctx, path, 1); err == nil {
		t.Fatal("CreateDemo replaced an existing file")
	}
	e := Export{Name: "demo", Source: "sqlite://" + path, Table: "orders", ChunkKey: "id", ChunkRows: 300,
		Destination: "mem://demo-test/{date}/{table}/"}
	res, err := Run(ctx, e, Options{StatePath: filepath.Join(t.TempDir(), "s.db")})
	if err != nil || res.Rows != 1000 || len(res.Parts) != 4 {
		t.Fatalf("run: %v %+v", err, res)
	}
	v, err := dataset.ValidateURL(ctx, res.Prefix, nil, true)
	if err != nil || !v.Certified {
		t.Fatalf("validate %s: %v %+v", res.Prefix, err, v)
	}
}
