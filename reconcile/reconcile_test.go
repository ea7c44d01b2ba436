package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/store"
	_ "github.com/wharfdata/wharf/store/mem"
)

func i64(v int64) *int64 { return &v }

// source is the figures of a chunk of 10 rows: id 1..10 (integer, no nulls), note text with
// 4 nulls.
func source() *export.ChunkFigures {
	return &export.ChunkFigures{Chunk: 2, Rows: 10, Columns: []export.ColumnFigures{
		{Name: "id", Found: true, NonNull: 10, Order: export.OrderInteger, Min: i64(1), Max: i64(10)},
		{Name: "note", Found: true, NonNull: 6},
	}}
}

func part() *PartFigures {
	return &PartFigures{Rows: 10, Columns: map[string]*ColumnStats{
		"id":   {HasNulls: true, HasMinMax: true, Kind: export.OrderInteger, Min: i64(1), Max: i64(10)},
		"note": {HasNulls: true, Nulls: 4, HasMinMax: true},
	}}
}

func figures(c Chunk) []string {
	var out []string
	for _, d := range c.Differences {
		out = append(out, d.Figure)
	}
	return out
}

func TestClassify(t *testing.T) {
	p := dataset.Part{Key: "part-x-00002.parquet", Chunk: 2, Rows: 10}
	for _, tc := range []struct {
		name    string
		src     func(*export.ChunkFigures)
		part    func(*PartFigures)
		reason  string
		status  string
		figures []string
	}{
		{name: "equal", status: Match},
		{name: "a row deleted", src: func(s *export.ChunkFigures) { s.Rows, s.Columns[0].NonNull, s.Columns[0].Max = 9, 9, i64(9) },
			status: Mismatch, figures: []string{"rows", "column id non-null", "column id max"}},
		{name: "a value nulled", src: func(s *export.ChunkFigures) { s.Columns[1].NonNull = 5 },
			status: Mismatch, figures: []string{"column note non-null"}},
		{name: "a min changed", src: func(s *export.ChunkFigures) { s.Columns[0].Min = i64(0) },
			status: Mismatch, figures: []string{"column id min"}},
		{name: "every row gone", src: func(s *export.ChunkFigures) {
			s.Rows, s.Columns[0].NonNull, s.Columns[1].NonNull, s.Columns[0].Min, s.Columns[0].Max = 0, 0, 0, nil, nil
		}, status: Mismatch, figures: []string{"rows", "column id non-null", "column id min", "column id max", "column note non-null"}},
		{name: "a column dropped", src: func(s *export.ChunkFigures) { s.Columns[1] = export.ColumnFigures{Name: "note"} },
			status: Mismatch, figures: []string{"column note: not in the source"}},
		{name: "no null count", part: func(pf *PartFigures) { pf.Columns["note"].HasNulls, pf.Columns["note"].MissingStat = false, "none" },
			status: Unknown},
		{name: "no min and max", part: func(pf *PartFigures) { pf.Columns["id"].HasMinMax = false }, status: Unknown},
		{name: "a difference wins over a missing statistic", src: func(s *export.ChunkFigures) { s.Rows = 11 },
			part: func(pf *PartFigures) { pf.Columns["id"].HasMinMax = false }, status: Mismatch, figures: []string{"rows"}},
		{name: "part missing", reason: "part_missing: gone", status: Unknown},
		{name: "inexact non-null count", src: func(s *export.ChunkFigures) { s.Columns[1].NonNull, s.Columns[1].NonNullInexact = 9, "infinity" },
			status: Match},
		{name: "not parquet", part: func(pf *PartFigures) { pf.Columns, pf.NoColumns = nil, "csv" }, status: Match},
		{name: "nested", src: func(s *export.ChunkFigures) { s.Columns[1].NonNull = 1 },
			part: func(pf *PartFigures) { pf.Columns["note"].Nested = true }, status: Match},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, pf := source(), part()
			if tc.src != nil {
				tc.src(src)
			}
			if tc.part != nil {
				tc.part(pf)
			}
			c := Classify(p, src, pf, tc.reason)
			if c.Status != tc.status || !slices.Equal(figures(c), tc.figures) {
				t.Errorf("got %s %v, want %s %v (%+v)", c.Status, figures(c), tc.status, tc.figures, c)
			}
			if c.Status == Unknown && c.Reason == "" {
				t.Error("an unknown chunk without a reason")
			}
			if !slices.ContainsFunc(c.NotCompared, func(s string) bool { return strings.HasPrefix(s, "column note min, max") }) && tc.part == nil && tc.reason == "" && tc.name != "a column dropped" {
				t.Errorf("note's min and max are not listed as not compared: %v", c.NotCompared)
			}
		})
	}
	if c := Classify(p, nil, part(), ""); c.Status != Unknown || c.SourceRows != nil {
		t.Errorf("no source figures: %+v", c)
	}
}

func TestReportErr(t *testing.T) {
	if err := (&Report{Matched: 2}).Err(); err != nil {
		t.Errorf("every chunk matched: %v", err)
	}
	for _, r := range []*Report{{Mismatched: 1}, {Unknown: 1}} {
		if err := r.Err(); err == nil || !strings.Contains(err.Error(), ErrMismatch.Error()) {
			t.Errorf("%+v: %v", r, err)
		}
	}
}

// TestFooterReadsOnlyTheFooter: the statistics of a part of two row groups are summed, and
// reading them reads a small fraction of the part.
func TestFooterReadsOnlyTheFooter(t *testing.T) {
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "small", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	const n = 20000
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := int64(1); i <= n; i++ {
		if i%7 == 0 {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(i * 3)
		}
		b.Field(1).(*array.Int16Builder).Append(int16(i%100 - 50))
		b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("note %d with some text to weigh the pages", i))
	}
	buf := writeParquet(t, b, parquet.WithMaxRowGroupLength(n/2), parquet.WithDictionaryDefault(false))
	s, err := store.Open(ctx, "mem://reconcile-footer/p/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info, err := s.Put(ctx, "part.parquet", bytes.NewReader(buf.Bytes()), nil)
	if err != nil {
		t.Fatal(err)
	}
	ra := &readerAt{ctx: ctx, s: s, key: "part.parquet", size: int64(buf.Len()), etag: info.ETag}
	pf, err := footer(ra)
	if err != nil {
		t.Fatal(err)
	}
	id, small := pf.Columns["id"], pf.Columns["small"]
	if pf.Rows != n || id == nil || id.Nulls != n/7 || *id.Min != 3 || *id.Max != n*3 || id.Kind != export.OrderInteger || !id.HasMinMax {
		t.Errorf("id: rows %d, %+v", pf.Rows, id)
	}
	if small == nil || *small.Min != -50 || *small.Max != 49 || small.Nulls != 0 || small.Kind != export.OrderInteger {
		t.Errorf("small: %+v", small)
	}
	if note := pf.Columns["note"]; note == nil || note.Kind != export.OrderText || note.Nulls != 0 {
		t.Errorf("note: %+v", note)
	}
	if ra.read*4 > int64(buf.Len()) {
		t.Errorf("read %d of the part's %d bytes: more than its footer", ra.read, buf.Len())
	}
}

// TestFooterStatesEachOrder: floats (a NaN and -0 among them), decimals (negative ones, in
// two's complement bytes) and UTF-8 text (in byte order) over two row groups give the
// extremes the source's MIN and MAX would, in export's canonical text.
func TestFooterStatesEachOrder(t *testing.T) {
	dec := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	schema := arrow.NewSchema([]arrow.Field{{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "dec", Type: dec, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "raw", Type: arrow.BinaryTypes.Binary, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	f32 := []float32{1.1, -2.5, 3}
	f64 := []float64{math.Copysign(0, -1), math.NaN(), 7.25, -1e300, 0.1}
	decs := []int64{-12345, 99, 0, -1, 123456789}
	strs := []string{"zebra", "é", "apple", "Zed", "éa"}
	for i := range 6 {
		if i < len(f32) {
			b.Field(0).(*array.Float32Builder).Append(f32[i])
		} else {
			b.Field(0).AppendNull()
		}
		if i < len(f64) {
			b.Field(1).(*array.Float64Builder).Append(f64[i])
			b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(decs[i]))
			b.Field(3).(*array.StringBuilder).Append(strs[i])
		} else {
			b.Field(1).AppendNull()
			b.Field(2).AppendNull()
			b.Field(3).AppendNull()
		}
		b.Field(4).(*array.BinaryBuilder).Append([]byte{byte(i)})
	}
	buf := writeParquet(t, b, parquet.WithMaxRowGroupLength(3))
	ra := &readerAt{ctx: context.Background(), s: memStore(t, buf.Bytes()), key: "part.parquet", size: int64(buf.Len())}
	pf, err := footer(ra)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		col, kind, min, max string
	}{
		{"f32", "float", export.CanonicalFloat(float64(float32(-2.5))), export.CanonicalFloat(float64(float32(3)))},
		{"f64", "float", "-1e+300", "7.25"},
		{"dec", "decimal", "-123.45", "1234567.89"},
		{"s", "text", "Zed", "éa"},
	} {
		cs := pf.Columns[want.col]
		if cs == nil || string(cs.Kind) != want.kind || !cs.HasMinMax || cs.MinText == nil || cs.MaxText == nil ||
			*cs.MinText != want.min || *cs.MaxText != want.max {
			t.Errorf("%s: %+v, want %s from %s to %s", want.col, cs, want.kind, want.min, want.max)
		}
	}
	if raw := pf.Columns["raw"]; raw == nil || raw.Kind != "" || raw.MinText != nil {
		t.Errorf("raw bytes: %+v, want no order", raw)
	}
}

func memStore(t *testing.T, part []byte) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), fmt.Sprintf("mem://reconcile-%d/p/", len(t.Name())+len(part)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Put(context.Background(), "part.parquet", bytes.NewReader(part), nil); err != nil {
		t.Fatal(err)
	}
	return s
}

func str(s string) *string { return &s }

// TestClassifyValues: the min and max of a float, text or decimal column are compared as
// text in canonical form; NaN in the source and text statistics a writer left out are not
// compared, and a column the part stores in another kind is not either.
func TestClassifyValues(t *testing.T) {
	p := dataset.Part{Key: "part-x-00001.parquet", Chunk: 1, Rows: 3}
	src := func(order export.Order, lo, hi string) *export.ChunkFigures {
		return &export.ChunkFigures{Chunk: 1, Rows: 3, Columns: []export.ColumnFigures{
			{Name: "v", Found: true, NonNull: 3, Order: order, MinText: str(lo), MaxText: str(hi)}}}
	}
	part := func(kind export.Order, lo, hi string, has bool) *PartFigures {
		return &PartFigures{Rows: 3, Columns: map[string]*ColumnStats{
			"v": {HasNulls: true, HasMinMax: has, Kind: kind, MinText: str(lo), MaxText: str(hi), MissingStat: "none"}}}
	}
	long := strings.Repeat("x", 1000)
	for _, tc := range []struct {
		name        string
		src         *export.ChunkFigures
		part        *PartFigures
		status      string
		figures     []string
		notCompared string
	}{
		{"text equal", src(export.OrderText, "a", "z"), part(export.OrderText, "a", "z", true), Match, nil, ""},
		{"text max changed", src(export.OrderText, "a", "zz"), part(export.OrderText, "a", "z", true), Mismatch, []string{"column v max"}, ""},
		{"float min changed", src(export.OrderFloat, "-1", "2"), part(export.OrderFloat, "0", "2", true), Mismatch, []string{"column v min"}, ""},
		{"decimal equal", src(export.OrderDecimal, "-1.50", "2.00"), part(export.OrderDecimal, "-1.50", "2.00", true), Match, nil, ""},
		{"NaN in the source", src(export.OrderFloat, "1", "NaN"), part(export.OrderFloat, "1", "2", true), Match, nil, "NaN"},
		{"text too long for statistics", src(export.OrderText, "a", long), part(export.OrderText, "", "", false), Match, nil, "longer than the writer keeps"},
		{"another kind in the part", src(export.OrderDecimal, "1.00", "2.00"), part(export.OrderText, "1.00", "2.00", true), Match, nil, "does not store it as a decimal"},
		{"decimal statistics missing", src(export.OrderDecimal, "1.00", "2.00"), part(export.OrderDecimal, "", "", false), Unknown, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Classify(p, tc.src, tc.part, "")
			if c.Status != tc.status || !slices.Equal(figures(c), tc.figures) {
				t.Fatalf("got %s %v, want %s %v (%+v)", c.Status, figures(c), tc.status, tc.figures, c)
			}
			if tc.notCompared != "" && !slices.ContainsFunc(c.NotCompared, func(s string) bool { return strings.Contains(s, tc.notCompared) }) {
				t.Errorf("not compared %v, want one saying %q", c.NotCompared, tc.notCompared)
			}
			for _, d := range c.Differences {
				if d.Source != nil || d.Part != nil || d.SourceValue == nil || d.PartValue == nil {
					t.Errorf("a difference of values: %+v", d)
				}
			}
		})
	}
	c := Classify(p, src(export.OrderText, "a", long+"y"), part(export.OrderText, "a", long+"z", true), "")
	if len(c.Differences) != 1 || len(*c.Differences[0].SourceValue) > maxValue+40 {
		t.Errorf("a long text difference is shown whole: %+v", c.Differences)
	}
}

// writeParquet writes the rows built in b as one Parquet file with props.
func writeParquet(t *testing.T, b *array.RecordBuilder, props ...parquet.WriterProperty) *bytes.Buffer {
	t.Helper()
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}
