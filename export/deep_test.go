package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/wharfdata/wharf/dataset"
)

// textExport exports a SQLite table t(id INTEGER PRIMARY KEY, name TEXT) of 30 rows in 3
// parts of format f, and returns the prefix's directory and the run.
func textExport(t *testing.T, f Format) (string, *Result) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.db")
	db := openDB(t, path)
	exec(t, db, `CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)`)
	exec(t, db, `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 30)
  INSERT INTO t SELECT i, 'name ' || i FROM g`)
	dir := t.TempDir()
	e := Export{Name: "t", Source: "sqlite://" + path, Table: "t", ChunkKey: "id", ChunkRows: 10, Format: f,
		Destination: "file://" + dir + "/"}
	res, err := Run(context.Background(), e, Options{StatePath: filepath.Join(t.TempDir(), "state.db")})
	if err != nil {
		t.Fatal(err)
	}
	return dir, res
}

// recertify makes the prefix at dir certified again after a test changed it: the manifest
// (edited by edit) records each part's size, sha256 and ETag as they are now, and _SUCCESS
// its hash, as a writer that made such parts would have written them.
func recertify(t *testing.T, dir string, edit func(m *Manifest)) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, dataset.ManifestKey))
	must(t, err)
	m, err := dataset.DecodeManifest(b)
	must(t, err)
	if edit != nil {
		edit(m)
	}
	s := openFileStore(t, dir)
	for i, p := range m.Parts {
		body, err := os.ReadFile(filepath.Join(dir, p.Key))
		must(t, err)
		sum := sha256.Sum256(body)
		info, err := s.Head(context.Background(), p.Key)
		must(t, err)
		m.Parts[i].Size, m.Parts[i].SHA256, m.Parts[i].ETag = int64(len(body)), hex.EncodeToString(sum[:]), info.ETag
	}
	must(t, putManifest(context.Background(), s, m))
}

func validateDir(t *testing.T, dir string, deep bool) *dataset.Validation {
	t.Helper()
	v, err := dataset.Validate(context.Background(), openFileStore(t, dir), dir, deep)
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	return v
}

// badTextPart writes a Parquet part of t's schema at path whose second row's name is the bytes
// DE AD BE EF: what wharf wrote before it refused such values.
func badTextPart(t *testing.T, path string) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(arrowMem, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	names := b.Field(1).(*array.StringBuilder)
	names.Append("fine")
	names.BinaryBuilder.Append([]byte{0xde, 0xad, 0xbe, 0xef})
	names.AppendNull()
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	must(t, err)
	defer f.Close()
	w, err := newPartWriter(FormatParquet, schema, f)
	must(t, err)
	must(t, w.Write(rec))
	must(t, w.Close())
}

// TestValidateDeepDecodesEveryPart: validate --deep decodes every part as a reader would and
// does not certify a part that is certified by size, ETag and sha256 yet holds a string that
// is not UTF-8, another number of rows or another schema than the manifest says, or that does
// not decode at all. Plain validate checks what the manifest says against itself.
func TestValidateDeepDecodesEveryPart(t *testing.T) {
	cases := []struct {
		name   string
		format Format
		tamper func(t *testing.T, dir string, res *Result)
		code   string
		plain  bool // plain validate finds it too
	}{
		{"a string that is not UTF-8", FormatParquet, func(t *testing.T, dir string, res *Result) {
			badTextPart(t, filepath.Join(dir, res.Parts[1].Key))
			recertify(t, dir, func(m *Manifest) { m.Rows += 3 - m.Parts[1].Rows; m.Parts[1].Rows = 3 })
		}, dataset.ProblemPartUTF8, false},
		{"another row count", FormatParquet, func(t *testing.T, dir string, res *Result) {
			recertify(t, dir, func(m *Manifest) { m.Parts[2].Rows++; m.Rows++ })
		}, dataset.ProblemPartRows, false},
		{"another schema", FormatParquet, func(t *testing.T, dir string, res *Result) {
			recertify(t, dir, func(m *Manifest) {
				m.Schema[1].Type = "binary"
				m.SchemaFingerprint = dataset.SchemaFingerprint(m.Schema)
			})
		}, dataset.ProblemPartSchema, false},
		{"not Parquet", FormatParquet, func(t *testing.T, dir string, res *Result) {
			must(t, os.WriteFile(filepath.Join(dir, res.Parts[0].Key), []byte("PAR1 not really PAR1"), 0o644))
			recertify(t, dir, nil)
		}, dataset.ProblemPartUnreadable, false},
		{"a fingerprint that is not the schema's", FormatParquet, func(t *testing.T, dir string, res *Result) {
			recertify(t, dir, func(m *Manifest) { m.SchemaFingerprint = "sha256:" + strings.Repeat("0", 64) })
		}, dataset.ProblemFingerprint, true},
		{"a row total that is not the parts'", FormatParquet, func(t *testing.T, dir string, res *Result) {
			recertify(t, dir, func(m *Manifest) { m.Rows++ })
		}, dataset.ProblemRowsTotal, true},
		{"NDJSON not UTF-8", FormatNDJSON, func(t *testing.T, dir string, res *Result) {
			p := filepath.Join(dir, res.Parts[0].Key)
			b, err := os.ReadFile(p)
			must(t, err)
			must(t, os.WriteFile(p, []byte(strings.Replace(string(b), "name 1", "name \xde\xad\xbe\xef", 1)), 0o644))
			recertify(t, dir, nil)
		}, dataset.ProblemPartUTF8, false},
		{"NDJSON rows", FormatNDJSON, func(t *testing.T, dir string, res *Result) {
			recertify(t, dir, func(m *Manifest) { m.Parts[0].Rows--; m.Rows-- })
		}, dataset.ProblemPartRows, false},
		{"CSV not UTF-8", FormatCSV, func(t *testing.T, dir string, res *Result) {
			p := filepath.Join(dir, res.Parts[2].Key)
			b, err := os.ReadFile(p)
			must(t, err)
			must(t, os.WriteFile(p, []byte(strings.Replace(string(b), "name 25", "name \xff", 1)), 0o644))
			recertify(t, dir, nil)
		}, dataset.ProblemPartUTF8, false},
		{"CSV rows", FormatCSV, func(t *testing.T, dir string, res *Result) {
			recertify(t, dir, func(m *Manifest) { m.Parts[1].Rows += 5; m.Rows += 5 })
		}, dataset.ProblemPartRows, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, res := textExport(t, c.format)
			if v := validateDir(t, dir, true); !v.Certified {
				t.Fatalf("the untouched export is not certified: %+v", v.Problems)
			}
			c.tamper(t, dir, res)
			if v := validateDir(t, dir, false); v.Certified == c.plain {
				t.Errorf("plain validate: certified %v, problems %+v", v.Certified, v.Problems)
			}
			v := validateDir(t, dir, true)
			if v.Certified || !hasProblem(v, c.code) {
				t.Fatalf("deep validate: want problem %s, got %+v", c.code, v.Problems)
			}
			out, _ := json.Marshal(v.Problems)
			t.Logf("%s", out)
		})
	}
}

// TestValidateNamesASymlinkedPart: a part replaced by a symbolic link (which the file store
// refuses to follow) is a problem named by its key, not a prefix whose manifest cannot be
// read.
func TestValidateNamesASymlinkedPart(t *testing.T) {
	dir, res := textExport(t, FormatParquet)
	part := filepath.Join(dir, res.Parts[1].Key)
	elsewhere := filepath.Join(t.TempDir(), "part")
	must(t, os.Rename(part, elsewhere))
	must(t, os.Symlink(elsewhere, part))
	for _, deep := range []bool{false, true} {
		v := validateDir(t, dir, deep)
		if v.Certified || !hasProblem(v, dataset.ProblemPartUnreadable) || v.Problems[0].Key != res.Parts[1].Key {
			t.Errorf("deep %v: %+v", deep, v.Problems)
		}
	}
}
