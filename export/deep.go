package export

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/wharfdata/wharf/dataset"
)

func init() {
	dataset.RegisterDecoder(FormatParquet, decodeParquet)
	dataset.RegisterDecoder(FormatCSV, decodeCSV)
}

// decodeParquet is the dataset.Decoder of Parquet parts, with arrow-go: the schema its
// writer declared (the ARROW:schema it stores, or the one its Parquet types give) must be the
// manifest's, the columns as decoded must be those, and every value of a string column must
// be valid UTF-8 (and of a JSON column, JSON).
func decodeParquet(ctx context.Context, part *dataset.PartFile) (int64, error) {
	m := part.Manifest
	pf, err := file.NewParquetReader(part.File)
	if err != nil {
		return 0, err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 16 * 1024}, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	decoded, err := fr.Schema()
	if err != nil {
		return 0, err
	}
	declared, err := storedSchema(pf)
	if err != nil {
		return 0, fmt.Errorf("its ARROW:schema: %w", err)
	}
	if declared == nil {
		declared = decoded
	}
	if msg := schemaMismatch(declared, decoded, m); msg != "" {
		part.Problem(dataset.ProblemPartSchema, "%s", msg)
		return pf.NumRows(), nil
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	var rows int64
	bad := map[int]bool{}
	for rr.Next() {
		rec := rr.RecordBatch()
		for c := 0; c < int(rec.NumCols()); c++ {
			t := declared.Field(c).Type
			if bad[c] || t.ID() != arrow.STRING && t.ID() != arrow.LARGE_STRING && !isJSON(t) {
				continue
			}
			if row, code, msg := badText(rec.Column(c), isJSON(t)); code != "" {
				bad[c] = true
				part.Problem(code, "column %q, row %d of the part: %s", declared.Field(c).Name, rows+int64(row)+1, msg)
			}
		}
		rows += rec.NumRows()
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return rows, err
	}
	return rows, nil
}

// storedSchema is the Arrow schema a Parquet file's writer stored (ARROW:schema), or nil.
func storedSchema(pf *file.Reader) (*arrow.Schema, error) {
	s := pf.MetaData().KeyValueMetadata().FindValue("ARROW:schema")
	if s == nil {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(*s)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(*s); err != nil {
			return nil, err
		}
	}
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	return r.Schema(), nil
}

// schemaMismatch says how a part's schema differs from the manifest's, or "". The decoded
// columns must be the declared ones; a JSON column decodes as binary (arrow-go reads Parquet's
// JSON type so).
func schemaMismatch(declared, decoded *arrow.Schema, m *Manifest) string {
	cols := make([]SchemaColumn, declared.NumFields())
	for i, fd := range declared.Fields() {
		cols[i] = SchemaColumn{Name: fd.Name, Type: fd.Type.String()}
	}
	if fp := dataset.SchemaFingerprint(cols); fp != m.SchemaFingerprint {
		return fmt.Sprintf("the part's schema (%s) is not the manifest's (fingerprint %s, the part's %s)",
			schemaText(cols), m.SchemaFingerprint, fp)
	}
	if decoded.NumFields() != declared.NumFields() {
		return fmt.Sprintf("the part decodes to %d columns, its schema declares %d", decoded.NumFields(), declared.NumFields())
	}
	for i, fd := range decoded.Fields() {
		want := declared.Field(i)
		if fd.Name != want.Name || !arrow.TypeEqual(fd.Type, want.Type) && !(isJSON(want.Type) && fd.Type.ID() == arrow.BINARY) {
			return fmt.Sprintf("column %d decodes as %s %s, its schema declares %s %s", i+1, fd.Name, fd.Type, want.Name, want.Type)
		}
	}
	return ""
}

func isJSON(t arrow.DataType) bool {
	et, ok := t.(arrow.ExtensionType)
	return ok && et.ExtensionName() == "arrow.json"
}

// badText returns the first value of a decoded string or JSON column that a reader rejects,
// with the problem and why: not UTF-8, or (JSON) not JSON; code "" when there is none.
func badText(a arrow.Array, asJSON bool) (row int, code, msg string) {
	if ext, ok := a.(array.ExtensionArray); ok {
		a = ext.Storage()
	}
	var value func(i int) []byte
	switch x := a.(type) {
	case *array.String:
		value = func(i int) []byte { return unsafe.Slice(unsafe.StringData(x.Value(i)), len(x.Value(i))) }
	case *array.LargeString:
		value = func(i int) []byte { return unsafe.Slice(unsafe.StringData(x.Value(i)), len(x.Value(i))) }
	case *array.Binary:
		value = x.Value
	default:
		return 0, "", ""
	}
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			continue
		}
		switch b := value(i); {
		case !utf8.Valid(b):
			return i, dataset.ProblemPartUTF8, fmt.Sprintf("value %s is not valid UTF-8", hexLiteral(b, 64))
		case asJSON && !json.Valid(b):
			return i, dataset.ProblemPartJSON, fmt.Sprintf("value %s is not JSON", describeValue(string(b)))
		}
	}
	return 0, "", ""
}

func schemaText(cols []SchemaColumn) string {
	s := ""
	for i, c := range cols {
		if i > 0 {
			s += ", "
		}
		s += c.Name + " " + c.Type
	}
	return s
}

// decodeCSV is the dataset.Decoder of CSV parts: a header naming the manifest's columns, then
// records of as many fields, valid UTF-8.
func decodeCSV(_ context.Context, part *dataset.PartFile) (int64, error) {
	text, err := part.Text()
	if err != nil {
		return 0, err
	}
	defer text.Close()
	schema := part.Manifest.Schema
	cr := newCSVRecords(text)
	head, err := cr.next()
	if err != nil {
		return 0, fmt.Errorf("no header line: %w", err)
	}
	names := make([]string, len(schema))
	for i, c := range schema {
		names[i] = c.Name
	}
	if !slices.Equal(head, names) {
		part.Problem(dataset.ProblemPartSchema, "the header %q is not the manifest's columns %q", head, names)
	}
	var rows int64
	found := false
	for {
		rec, err := cr.next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows++
		if len(rec) != len(schema) && !found {
			part.Problem(dataset.ProblemPartSchema, "record %d has %d fields, the manifest %d columns", rows, len(rec), len(schema))
			found = true
		}
		for i, f := range rec {
			if !found && !utf8.ValidString(f) {
				part.Problem(dataset.ProblemPartUTF8, "record %d, field %d is not valid UTF-8", rows, i+1)
				found = true
			}
		}
	}
}
