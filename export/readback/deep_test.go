package readback

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/store"
)

// TestValidateDeepRefusesWhatDuckDBRejects: a prefix whose part holds a string that is not
// UTF-8 (what wharf wrote before it refused such values), certified by size, ETag, sha256 and
// _SUCCESS, is one DuckDB refuses to read; validate --deep does not certify it, and names the
// part, the column and the row.
func TestValidateDeepRefusesWhatDuckDBRejects(t *testing.T) {
	ctx := context.Background()
	src := sqliteSource(t, `CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT)`, `INSERT INTO u VALUES (1, 'a'), (2, 'b')`)
	dir := filepath.Join(t.TempDir(), "out")
	e := export.Export{Name: "u", Source: "sqlite://" + src, Table: "u", ChunkKey: "id", Destination: dir + "/"}
	res, err := export.Run(ctx, e, export.Options{StatePath: filepath.Join(t.TempDir(), "state.db")})
	if err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(dir, res.Parts[0].Key)

	// The part as the old writer made it: the same schema, the second value DE AD BE EF.
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	b.Field(1).(*array.StringBuilder).Append("a")
	b.Field(1).(*array.StringBuilder).BinaryBuilder.Append([]byte{0xde, 0xad, 0xbe, 0xef})
	rec := b.NewRecordBatch()
	f, err := os.Create(part)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, nil, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	certify(t, dir)

	v, err := dataset.ValidateURL(ctx, dir, nil, false)
	if err != nil || !v.Certified {
		t.Fatalf("plain validate does not certify the doctored prefix, so the test proves nothing: %v %+v", err, v)
	}
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer duck.Close()
	var got string
	err = duck.QueryRow("SELECT string_agg(v, ',') FROM read_parquet('" + part + "')").Scan(&got)
	if err == nil || !strings.Contains(err.Error(), "UTF8") {
		t.Fatalf("DuckDB reads %q (%v): want it to reject the part", got, err)
	}
	v, err = dataset.ValidateURL(ctx, dir, nil, true)
	if err != nil || v.Certified || len(v.Problems) != 1 {
		t.Fatalf("validate --deep: %v %+v", err, v)
	}
	p := v.Problems[0]
	if p.Code != dataset.ProblemPartUTF8 || p.Key != res.Parts[0].Key || !strings.Contains(p.Message, `column "v", row 2`) ||
		!strings.Contains(p.Message, "x'deadbeef'") {
		t.Errorf("the problem: %+v", p)
	}
}

// certify rewrites the manifest at dir to record its parts as they are now, and _SUCCESS, as
// a writer that made them would have.
func certify(t *testing.T, dir string) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(dir, dataset.ManifestKey))
	if err != nil {
		t.Fatal(err)
	}
	m, err := dataset.DecodeManifest(body)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(context.Background(), "file://"+dir+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, p := range m.Parts {
		b, err := os.ReadFile(filepath.Join(dir, p.Key))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		info, err := s.Head(context.Background(), p.Key)
		if err != nil {
			t.Fatal(err)
		}
		m.Parts[i].Size, m.Parts[i].SHA256, m.Parts[i].ETag = int64(len(b)), hex.EncodeToString(sum[:]), info.ETag
	}
	body, err = m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, dataset.ManifestKey), body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, dataset.SuccessKey), dataset.SuccessBody(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
