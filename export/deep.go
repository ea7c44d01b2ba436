package export

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/klauspost/compress/gzip"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/zstd"

	"github.com/wharfdata/wharf/store"
)

// deepCheck reads a part whole: it re-hashes its bytes and decodes every row as a reader
// would, so that a part a reader rejects is never certified. The part is copied to a temporary
// file on the way (a Parquet reader needs to seek), so memory stays bounded by one batch.
// Problems are added to v; the error is for a part that cannot be read from the store at all.
func (v *Validation) deepCheck(ctx context.Context, s *store.Store, m *Manifest, p Part) error {
	obj, err := s.Get(ctx, p.Key, nil)
	if err != nil {
		return err
	}
	defer obj.Close()
	tmp, err := os.CreateTemp("", "wharf-validate-*")
	if err != nil {
		return fmt.Errorf("reading %s whole needs a temporary file: %w", p.Key, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(h, tmp), obj); err != nil {
		return err
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != p.SHA256 {
		v.add(ProblemPartHash, p.Key, "part's bytes hash to sha256 %s, the manifest records %s", sum, p.SHA256)
		return nil // a changed part: what it decodes to says nothing more
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	var rows int64
	switch m.Format {
	case FormatNDJSON, FormatCSV, FormatLines:
		var text io.ReadCloser
		if text, err = decompressed(tmp, p.Key); err != nil {
			break
		}
		switch m.Format {
		case FormatNDJSON:
			rows, err = v.decodeNDJSON(text, p.Key)
		case FormatCSV:
			rows, err = v.decodeCSV(text, p.Key, m.Schema)
		default:
			rows, err = v.decodeLines(text, p.Key)
		}
		text.Close()
	default:
		rows, err = v.decodeParquet(ctx, tmp, p.Key, m)
	}
	if err != nil {
		v.add(ProblemPartUnreadable, p.Key, "the part does not decode: %v", err)
		return nil
	}
	if rows != p.Rows {
		v.add(ProblemPartRows, p.Key, "the part holds %d rows, the manifest records %d", rows, p.Rows)
	}
	return nil
}

// decompressed reads a text part as a reader of it reads it: a .zst part through zstd, a .gz
// part through gzip (as a backfill's parts are written), anything else as it is.
func decompressed(r io.Reader, key string) (io.ReadCloser, error) {
	switch {
	case strings.HasSuffix(key, ".zst"):
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	case strings.HasSuffix(key, ".gz"):
		return gzip.NewReader(r)
	}
	return io.NopCloser(r), nil
}

// decodeParquet reads a Parquet part with arrow-go: the schema its writer declared (the
// ARROW:schema it stores, or the one its Parquet types give) must be the manifest's, the
// columns as decoded must be those, and every value of a string column must be valid UTF-8
// (and of a JSON column, JSON).
func (v *Validation) decodeParquet(ctx context.Context, f *os.File, key string, m *Manifest) (int64, error) {
	pf, err := file.NewParquetReader(f)
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
		v.add(ProblemPartSchema, key, "%s", msg)
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
				v.add(code, key, "column %q, row %d of the part: %s", declared.Field(c).Name, rows+int64(row)+1, msg)
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
	if fp := SchemaFingerprint(cols); fp != m.SchemaFingerprint {
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
			return i, ProblemPartUTF8, fmt.Sprintf("value %s is not valid UTF-8", hexLiteral(b, 64))
		case asJSON && !json.Valid(b):
			return i, ProblemPartJSON, fmt.Sprintf("value %s is not JSON", describeValue(string(b)))
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

// decodeNDJSON reads an NDJSON part: one JSON object a line, valid UTF-8.
func (v *Validation) decodeNDJSON(r io.Reader, key string) (int64, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var rows int64
	found := false
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			rows++
			if !found && (!utf8.Valid(line) || !json.Valid(line)) {
				v.add(ProblemPartUTF8, key, "line %d is not valid UTF-8 JSON", rows)
				found = true
			}
		}
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
	}
}

// decodeLines reads a lines part: records of any bytes, each ending in '\n'. A last record
// without its newline was cut short.
func (v *Validation) decodeLines(r io.Reader, key string) (int64, error) {
	buf := make([]byte, 1<<16)
	var rows int64
	last := byte('\n')
	for {
		n, err := r.Read(buf)
		if n > 0 {
			rows += int64(bytes.Count(buf[:n], []byte{'\n'}))
			last = buf[n-1]
		}
		if errors.Is(err, io.EOF) {
			if last != '\n' {
				v.add(ProblemPartUnreadable, key, "the part's last record has no newline: the part was cut short")
				rows++
			}
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
	}
}

// decodeCSV reads a CSV part: a header naming the manifest's columns, then records of as
// many fields, valid UTF-8.
func (v *Validation) decodeCSV(r io.Reader, key string, schema []SchemaColumn) (int64, error) {
	cr := newCSVRecords(r)
	head, err := cr.next()
	if err != nil {
		return 0, fmt.Errorf("no header line: %w", err)
	}
	names := make([]string, len(schema))
	for i, c := range schema {
		names[i] = c.Name
	}
	if !slices.Equal(head, names) {
		v.add(ProblemPartSchema, key, "the header %q is not the manifest's columns %q", head, names)
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
			v.add(ProblemPartSchema, key, "record %d has %d fields, the manifest %d columns", rows, len(rec), len(schema))
			found = true
		}
		for i, f := range rec {
			if !found && !utf8.ValidString(f) {
				v.add(ProblemPartUTF8, key, "record %d, field %d is not valid UTF-8", rows, i+1)
				found = true
			}
		}
	}
}
