package export

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	pq "github.com/parquet-go/parquet-go"
	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
)

// benchBatches builds n rows of bench/export.sh's table (id bigint, qty int, price float8,
// amount numeric(12,2), name text, ok bool, at timestamptz, u uuid), with its values, as the
// record batches an export hands its part writer (16,384 rows each).
func benchBatches(tb testing.TB, n int) (*arrow.Schema, []arrow.RecordBatch) {
	tb.Helper()
	cols := []Column{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "qty", Type: arrow.PrimitiveTypes.Int32},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64}, {Name: "amount", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}},
		{Name: "name", Type: arrow.BinaryTypes.String}, {Name: "ok", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "at", Type: tsUTC}, {Name: "u", Type: uuidType}}
	schema := schemaOf(cols)
	b := array.NewRecordBuilder(arrowMem, schema)
	defer b.Release()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	var recs []arrow.RecordBatch
	for g := 1; g <= n; g++ {
		b.Field(0).(*array.Int64Builder).Append(int64(g))
		b.Field(1).(*array.Int32Builder).Append(int32(g % 1000))
		b.Field(2).(*array.Float64Builder).Append(float64(g) / 7)
		b.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(g % 100000)))
		b.Field(4).(*array.StringBuilder).Append("item " + strconv.Itoa(g))
		b.Field(5).(*array.BooleanBuilder).Append(g%3 == 0)
		b.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(base + int64(g)*1_000_000))
		b.Field(7).(*extensions.UUIDBuilder).AppendBytes(md5.Sum([]byte(strconv.Itoa(g))))
		if g%16384 == 0 || g == n {
			recs = append(recs, b.NewRecordBatch())
		}
	}
	return schema, recs
}

// parquetGoWriter writes record batches with github.com/parquet-go/parquet-go, column by
// column through its ColumnWriters, in the Parquet types arrow-go gives the same Arrow types,
// with zstd at its fastest level, row groups of maxRowGroup rows and the Arrow schema stored
// as ARROW:schema (as arrow-go stores it).
type parquetGoWriter struct {
	w       *pq.GenericWriter[any]
	vals    []pq.Value
	inGroup int
}

func newParquetGoWriter(schema *arrow.Schema, out io.Writer) (*parquetGoWriter, error) {
	group := pq.Group{}
	for _, f := range schema.Fields() {
		var n pq.Node
		switch t := f.Type.(type) {
		case *arrow.Int64Type:
			n = pq.Int(64)
		case *arrow.Int32Type:
			n = pq.Int(32)
		case *arrow.Float64Type:
			n = pq.Leaf(pq.DoubleType)
		case *arrow.Decimal128Type:
			n = pq.Decimal(int(t.Scale), int(t.Precision), pq.FixedLenByteArrayType(decimalBytes(t.Precision)))
		case *arrow.StringType:
			n = pq.String()
		case *arrow.BooleanType:
			n = pq.Leaf(pq.BooleanType)
		case *arrow.TimestampType:
			n = pq.TimestampAdjusted(pq.Microsecond, t.TimeZone != "")
		case *extensions.UUIDType:
			n = pq.UUID()
		default:
			return nil, fmt.Errorf("no parquet-go mapping for %s", f.Type)
		}
		group[f.Name] = pq.Optional(n)
	}
	// pq.Group orders its fields by name; keep the Arrow order by writing columns by name.
	w := pq.NewGenericWriter[any](out, pq.NewSchema("wharf", group), pq.Compression(&pqzstd.Codec{Level: pqzstd.SpeedFastest}),
		pq.MaxRowsPerRowGroup(maxRowGroup), pq.CreatedBy("wharf", "", ""), pq.PageBufferSize(1<<20))
	return &parquetGoWriter{w: w}, nil
}

// decimalBytes is the width arrow-go gives a decimal of this precision.
func decimalBytes(precision int32) int {
	n := 1
	for new(big.Int).Exp(big.NewInt(2), big.NewInt(int64(8*n-1)), nil).Cmp(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(precision)), nil)) < 0 {
		n++
	}
	return n
}

func (p *parquetGoWriter) Write(rec arrow.RecordBatch) error {
	cws := p.w.ColumnWriters()
	leaves := p.w.Schema().Fields()
	rows := int(rec.NumRows())
	for c, leaf := range leaves {
		idx := rec.Schema().FieldIndices(leaf.Name())[0]
		a := rec.Column(idx)
		p.vals = p.vals[:0]
		for i := 0; i < rows; i++ {
			if a.IsNull(i) {
				p.vals = append(p.vals, pq.NullValue().Level(0, 0, c))
				continue
			}
			p.vals = append(p.vals, p.value(a, i).Level(0, 1, c))
		}
		if _, err := cws[c].WriteRowValues(p.vals); err != nil {
			return err
		}
	}
	p.inGroup += rows
	if p.inGroup >= maxRowGroup {
		p.inGroup = 0
		return p.w.Flush()
	}
	return nil
}

func (p *parquetGoWriter) value(a arrow.Array, i int) pq.Value {
	switch a := a.(type) {
	case *array.Int64:
		return pq.Int64Value(a.Value(i))
	case *array.Int32:
		return pq.Int32Value(a.Value(i))
	case *array.Float64:
		return pq.DoubleValue(a.Value(i))
	case *array.Decimal128:
		v := a.Value(i)
		var be [16]byte
		binary.BigEndian.PutUint64(be[:8], uint64(v.HighBits()))
		binary.BigEndian.PutUint64(be[8:], v.LowBits())
		n := decimalBytes(a.DataType().(*arrow.Decimal128Type).Precision)
		return pq.FixedLenByteArrayValue(be[16-n:])
	case *array.String:
		s := a.Value(i) // the column buffer copies the bytes
		return pq.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s)))
	case *array.Boolean:
		return pq.BooleanValue(a.Value(i))
	case *array.Timestamp:
		return pq.Int64Value(int64(a.Value(i)))
	case array.ExtensionArray:
		return pq.FixedLenByteArrayValue(a.Storage().(*array.FixedSizeBinary).Value(i))
	}
	panic(fmt.Sprintf("no value for %T", a))
}

func (p *parquetGoWriter) Close() error { return p.w.Close() }

// benchRow is the bench table as a Go struct, for parquet-go's fastest path (GenericWriter
// with a type known at compile time), which an export, whose columns are known only at run
// time, cannot take: it shows what parquet-go can do at best.
type benchRow struct {
	ID     *int64     `parquet:"id,optional"`
	Qty    *int32     `parquet:"qty,optional"`
	Price  *float64   `parquet:"price,optional"`
	Amount *int64     `parquet:"amount,optional,decimal(2:12)"`
	Name   *string    `parquet:"name,optional"`
	OK     *bool      `parquet:"ok,optional"`
	At     *time.Time `parquet:"at,optional,timestamp(microsecond)"`
	U      *[16]byte  `parquet:"u,optional"` // FIXED_LEN_BYTE_ARRAY(16); parquet-go takes uuid only on [16]byte
}

type parquetGoStructWriter struct {
	w    *pq.GenericWriter[benchRow]
	rows []benchRow
	in   int
}

func (p *parquetGoStructWriter) Write(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	p.rows = slices.Grow(p.rows[:0], n)[:n]
	ids, qty := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int32)
	price, amount := rec.Column(2).(*array.Float64), rec.Column(3).(*array.Decimal128)
	name, ok := rec.Column(4).(*array.String), rec.Column(5).(*array.Boolean)
	at, u := rec.Column(6).(*array.Timestamp), rec.Column(7).(array.ExtensionArray).Storage().(*array.FixedSizeBinary)
	vals := make([]struct {
		id, amount int64
		qty        int32
		price      float64
		name       string
		ok         bool
		at         time.Time
		u          [16]byte
	}, n)
	for i := range n {
		v := &vals[i]
		v.id, v.qty, v.price, v.amount = ids.Value(i), qty.Value(i), price.Value(i), int64(amount.Value(i).LowBits())
		v.name, v.ok, v.at, v.u = name.Value(i), ok.Value(i), at.Value(i).ToTime(arrow.Microsecond), [16]byte(u.Value(i))
		p.rows[i] = benchRow{&v.id, &v.qty, &v.price, &v.amount, &v.name, &v.ok, &v.at, &v.u}
	}
	if _, err := p.w.Write(p.rows); err != nil {
		return err
	}
	if p.in += n; p.in >= maxRowGroup {
		p.in = 0
		return p.w.Flush()
	}
	return nil
}

func (p *parquetGoStructWriter) Close() error { return p.w.Close() }

// BenchmarkParquetWriters writes the same rows (WHARF_BENCH_ROWS, default 1,000,000, of
// bench/export.sh's table) with arrow-go as the export writes them, with arrow-go keeping
// dictionaries for text columns only, and with parquet-go (its run-time schema path, and its
// compile-time struct path for comparison), each through sha256 as a part is;
// run it several times (-count 1) to interleave them.
func BenchmarkParquetWriters(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("WHARF_BENCH_ROWS")); err == nil && v > 0 {
		n = v
	}
	schema, recs := benchBatches(b, n)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	writers := []struct {
		name string
		make func(w io.Writer) (partWriter, error)
	}{
		{"arrow-go", func(w io.Writer) (partWriter, error) { return newParquetWriter(schema, w, dictAll) }},
		{"arrow-go-dict-text", func(w io.Writer) (partWriter, error) { return newParquetWriter(schema, w, dictText) }},
		{"parquet-go", func(w io.Writer) (partWriter, error) { return newParquetGoWriter(schema, w) }},
		{"parquet-go-struct", func(w io.Writer) (partWriter, error) {
			return &parquetGoStructWriter{w: pq.NewGenericWriter[benchRow](w, pq.Compression(&pqzstd.Codec{Level: pqzstd.SpeedFastest}),
				pq.MaxRowsPerRowGroup(maxRowGroup), pq.CreatedBy("wharf", "", ""), pq.PageBufferSize(1<<20))}, nil
		}},
	}
	for _, wr := range writers {
		b.Run(wr.name, func(b *testing.B) {
			var size int64
			for b.Loop() {
				hc := &hashCounter{w: io.Discard, h: sha256.New()}
				pw, err := wr.make(hc)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range recs {
					if err := pw.Write(r); err != nil {
						b.Fatal(err)
					}
				}
				if err := pw.Close(); err != nil {
					b.Fatal(err)
				}
				size = hc.n
			}
			b.ReportMetric(float64(size)/(1<<20), "MiB")
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
