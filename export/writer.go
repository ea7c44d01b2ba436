package export

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// partWriter writes record batches in one format to a part's body.
type partWriter interface {
	Write(rec arrow.RecordBatch) error
	Close() error // flushes; does not close the underlying writer
}

// contentType is the MIME type of parts in f.
func contentType(f Format) string {
	switch f {
	case FormatNDJSON:
		return "application/x-ndjson"
	case FormatCSV:
		return "text/csv"
	}
	return "application/vnd.apache.parquet"
}

// maxRowGroup bounds a Parquet row group, and so the encoded data buffered per chunk in flight.
const maxRowGroup = 64 * 1024

// maxRowGroupBytes bounds a row group's buffered pages too, so that a table of wide rows does
// not hold 64 Ki of them per chunk in flight: a row group is closed once its compressed pages
// reach it. (A variable for the test that shows it.)
var maxRowGroupBytes int64 = 32 << 20

// maxDictPage bounds a column's dictionary per row group: a low-cardinality column stays
// dictionary-encoded, and a high-cardinality one (a key, a timestamp, a price) falls back to
// plain encoding after a few thousand values instead of growing hash tables through the whole
// row group (arrow-go's default of 1 MiB made dictionary hashing the largest cost of an export).
const maxDictPage = 64 * 1024

// zstdLevel is zstd's level 1 (klauspost's SpeedFastest): arrow-go's default (SpeedDefault)
// made compression a third of an export's CPU for a few per cent smaller parts.
const zstdLevel = 1

func newPartWriter(f Format, schema *arrow.Schema, w io.Writer) (partWriter, error) {
	switch f {
	case FormatNDJSON:
		return &ndjsonWriter{w: bufio.NewWriter(w)}, nil
	case FormatCSV:
		return newCSVWriter(schema, w)
	}
	return newParquetWriter(schema, w, dictText)
}

// dictPolicy says which columns a Parquet part keeps dictionaries for.
type dictPolicy int

const (
	dictAll  dictPolicy = iota // every column (arrow-go's default)
	dictText                   // text and binary columns only
)

func newParquetWriter(schema *arrow.Schema, w io.Writer, dict dictPolicy) (partWriter, error) {
	useKeptZstd()
	useRecycler()
	opts := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(zstdLevel),
		parquet.WithMaxRowGroupLength(maxRowGroup),
		parquet.WithDictionaryPageSizeLimit(maxDictPage),
		parquet.WithCreatedBy("wharf"),
		parquet.WithAllocator(arrowMem),
	}
	if dict == dictText {
		for _, f := range schema.Fields() {
			if !keepsDictionary(f.Type) {
				opts = append(opts, parquet.WithDictionaryFor(f.Name, false))
			}
		}
	}
	props := parquet.NewWriterProperties(opts...)
	fw, err := pqarrow.NewFileWriter(schema, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(arrowMem)))
	if err != nil {
		return nil, err
	}
	return &parquetWriter{fw: fw}, nil
}

// keepsDictionary reports whether a column of type t keeps a dictionary: text and binary
// columns do (names, codes, statuses repeat); numbers, dates, timestamps, decimals and UUIDs do
// not. Their dictionaries mostly fell back to plain encoding within a row group anyway, after
// hashing every value, which took a sixth of an export's CPU; zstd compresses their repeats as
// well (the bench table's parts got smaller).
func keepsDictionary(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return true
	case arrow.EXTENSION:
		return keepsDictionary(t.(arrow.ExtensionType).StorageType())
	}
	return false
}

type parquetWriter struct {
	fw  *pqarrow.FileWriter
	cut bool // the current row group reached maxRowGroupBytes: the next batch starts another
}

func (p *parquetWriter) Write(rec arrow.RecordBatch) error {
	if p.cut {
		p.cut = false
		if err := p.fw.NewBufferedRowGroupChecked(); err != nil {
			return err
		}
	}
	if err := p.fw.WriteBuffered(rec); err != nil {
		return err
	}
	p.cut = p.fw.RowGroupTotalCompressedBytes() >= maxRowGroupBytes
	return nil
}

func (p *parquetWriter) Close() error { return p.fw.Close() }

// cellText is the text of row i of a, for CSV and the non-numeric NDJSON values. ok is false
// for NULL.
func cellText(a arrow.Array, i int) (string, bool) {
	if a.IsNull(i) {
		return "", false
	}
	switch a := a.(type) {
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit).UTC().Format(time.RFC3339Nano), true
	case *array.Date32:
		return a.Value(i).ToTime().Format(time.DateOnly), true
	case *array.Binary:
		return base64.StdEncoding.EncodeToString(a.Value(i)), true
	case *array.String:
		return a.Value(i), true
	}
	return a.ValueStr(i), true
}

type ndjsonWriter struct {
	w   *bufio.Writer
	buf []byte
}

func (n *ndjsonWriter) Write(rec arrow.RecordBatch) error {
	schema := rec.Schema()
	for row := 0; row < int(rec.NumRows()); row++ {
		n.buf = append(n.buf[:0], '{')
		for c := 0; c < int(rec.NumCols()); c++ {
			if c > 0 {
				n.buf = append(n.buf, ',')
			}
			n.buf = strconv.AppendQuote(n.buf, schema.Field(c).Name)
			n.buf = append(n.buf, ':')
			n.buf = appendJSONValue(n.buf, rec.Column(c), row)
		}
		n.buf = append(n.buf, '}', '\n')
		if _, err := n.w.Write(n.buf); err != nil {
			return err
		}
	}
	return nil
}

func (n *ndjsonWriter) Close() error { return n.w.Flush() }

// appendJSONValue writes numbers and booleans bare, JSON columns as their JSON, and everything
// else (decimals too, to keep their precision) as a JSON string.
func appendJSONValue(buf []byte, a arrow.Array, i int) []byte {
	if a.IsNull(i) {
		return append(buf, "null"...)
	}
	switch a.DataType().ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.BOOL:
		return append(buf, a.ValueStr(i)...)
	case arrow.EXTENSION:
		if a.DataType().(arrow.ExtensionType).ExtensionName() == "arrow.json" {
			s, _ := cellText(a.(array.ExtensionArray).Storage(), i)
			if json.Valid([]byte(s)) {
				return append(buf, s...)
			}
		}
	}
	s, _ := cellText(a, i)
	b, _ := json.Marshal(s)
	return append(buf, b...)
}

type csvWriter struct {
	w   *bufio.Writer
	buf []byte
}

func newCSVWriter(schema *arrow.Schema, w io.Writer) (*csvWriter, error) {
	cw := &csvWriter{w: bufio.NewWriter(w)}
	for i, f := range schema.Fields() {
		if i > 0 {
			cw.buf = append(cw.buf, ',')
		}
		cw.buf = appendCSVField(cw.buf, f.Name, true)
	}
	cw.buf = append(cw.buf, '\n')
	_, err := cw.w.Write(cw.buf)
	return cw, err
}

// Write writes one line per row. NULL is an empty field, unquoted; an empty value (text, or
// bytes, whose base64 is empty) is "" — as PostgreSQL's COPY … CSV writes and reads them — so
// that a reader tells them apart.
func (c *csvWriter) Write(rec arrow.RecordBatch) error {
	for row := 0; row < int(rec.NumRows()); row++ {
		c.buf = c.buf[:0]
		for col := 0; col < int(rec.NumCols()); col++ {
			if col > 0 {
				c.buf = append(c.buf, ',')
			}
			s, ok := cellText(rec.Column(col), row)
			c.buf = appendCSVField(c.buf, s, ok)
		}
		c.buf = append(c.buf, '\n')
		if _, err := c.w.Write(c.buf); err != nil {
			return err
		}
	}
	return nil
}

func (c *csvWriter) Close() error { return c.w.Flush() }

// appendCSVField appends one field as RFC 4180 has it: NULL (!ok) as nothing; a value in
// double quotes, each quote inside doubled, when it is empty, holds a comma, a quote, CR or
// LF, starts with a space, or is \. (PostgreSQL's end-of-data marker); any other value bare.
func appendCSVField(buf []byte, s string, ok bool) []byte {
	if !ok {
		return buf
	}
	r, _ := utf8.DecodeRuneInString(s)
	if s != "" && s != `\.` && !strings.ContainsAny(s, ",\"\r\n") && !unicode.IsSpace(r) {
		return append(buf, s...)
	}
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			buf = append(buf, '"')
		}
		buf = append(buf, s[i])
	}
	return append(buf, '"')
}
