package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/store"
)

// Options say what to reconcile.
type Options struct {
	Export *export.Export // the export, as its config section prepared it
	Prefix string         // the URL of the run's prefix
	Store  *store.Config  // the prefix's store options
	Getenv func(string) string
	// Parallel is how many chunks' queries run on the source at once (0 or less: 1).
	Parallel int
}

// The statuses of a chunk.
const (
	Match    = "match"
	Mismatch = "mismatch"
	Unknown  = "unknown"
)

// Report is what Run found. Its JSON is the stable schema of `wharf reconcile --format json`
// (fields are only ever added).
type Report struct {
	Prefix      string                  `json:"prefix"`
	Export      string                  `json:"export"`
	RunID       string                  `json:"run_id"`
	Mode        dataset.Mode            `json:"mode"`
	Consistency dataset.ConsistencyMode `json:"consistency,omitempty"` // as the run read the source
	Cursor      *dataset.CursorWindow   `json:"cursor,omitempty"`      // a delta run's window, reconciled
	Note        string                  `json:"note,omitempty"`        // why every chunk is unknown, if one reason
	Matched     int                     `json:"matched"`
	Mismatched  int                     `json:"mismatched"`
	Unknown     int                     `json:"unknown"`
	Chunks      []Chunk                 `json:"chunks"`
}

// Chunk is one chunk's verdict.
type Chunk struct {
	Chunk       int          `json:"chunk"`
	Part        string       `json:"part"`
	Status      string       `json:"status"`
	SourceRows  *int64       `json:"source_rows"` // nil when the source was not queried
	PartRows    *int64       `json:"part_rows"`   // nil when the part could not be read
	Differences []Difference `json:"differences"`
	NotCompared []string     `json:"not_compared"` // figures that cannot be compared exactly, and why
	Reason      string       `json:"reason,omitempty"`
}

// Difference is one figure that differs: "rows", "column X non-null", "column X min",
// "column X max", "column X: not in the source". A count, or the min or max of an integer
// (or a date or timestamp compared as one), is in Source and Part; the min or max of a
// float, text or decimal column is in SourceValue and PartValue, as text (Source and Part
// are then null). A nil value is absent (no non-null value).
type Difference struct {
	Figure      string  `json:"figure"`
	Source      *int64  `json:"source"`
	Part        *int64  `json:"part"`
	SourceValue *string `json:"source_value,omitempty"`
	PartValue   *string `json:"part_value,omitempty"`
}

// Err returns nil when every chunk matches, and an ErrMismatch error otherwise.
func (r *Report) Err() error {
	if r.Mismatched == 0 && r.Unknown == 0 {
		return nil
	}
	return errcode.E("reconcile", r.Prefix, ErrMismatch,
		fmt.Errorf("%d of %d chunk(s) mismatch, %d unknown", r.Mismatched, len(r.Chunks), r.Unknown))
}

// partProblems are the validation problems with one part: its chunk is unknown, the rest of
// the run is reconciled.
var partProblems = []string{dataset.ProblemPartMissing, dataset.ProblemPartSize, dataset.ProblemPartETag,
	dataset.ProblemPartHash, dataset.ProblemPartUnreadable}

// Run reconciles the run at o.Prefix with o.Export's source (see the package documentation).
func Run(ctx context.Context, o Options) (*Report, error) {
	m, broken, err := certified(ctx, o)
	if err != nil {
		return nil, err
	}
	r := &Report{Prefix: o.Prefix, Export: m.Export, RunID: m.RunID, Mode: m.Mode, Cursor: m.Cursor, Chunks: []Chunk{}}
	if m.Consistency != nil {
		r.Consistency = m.Consistency.Mode
	}
	var figs []export.ChunkFigures
	if m.Mode == dataset.ModeDelta && m.Cursor == nil {
		r.Note = "the manifest of this delta run records no cursor window, so its chunks' rows cannot be selected again"
	} else if figs, err = export.Figures(ctx, o.Export, m, o.Parallel, o.Getenv); err != nil {
		return nil, err
	}
	s, err := store.Open(ctx, o.Prefix, o.Store)
	if err != nil {
		return nil, errcode.E("reconcile", o.Prefix, dataset.ErrVerifyManifestRead, err)
	}
	defer s.Close()
	for i, p := range m.Parts {
		var src *export.ChunkFigures
		if figs != nil {
			src = &figs[i]
		}
		pf, reason, err := partFigures(ctx, s, m, p, broken[p.Key])
		if err != nil {
			return nil, err
		}
		if src == nil && reason == "" {
			reason = r.Note
		}
		r.add(Classify(p, src, pf, reason))
	}
	return r, nil
}

// certified returns the manifest of the run at o.Prefix, which must be certified but for
// problems with single parts (returned by key), of o.Export as it is defined now.
func certified(ctx context.Context, o Options) (*dataset.Manifest, map[string]string, error) {
	v, err := dataset.ValidateURL(ctx, o.Prefix, o.Store, false)
	if err != nil {
		return nil, nil, err
	}
	broken := map[string]string{}
	for _, p := range v.Problems {
		if !slices.Contains(partProblems, p.Code) || v.Manifest == nil {
			return nil, nil, errcode.E("reconcile", o.Prefix, ErrRefused, fmt.Errorf("not a certified run: %w", v.NotCertified()))
		}
		broken[p.Key] = p.Code + ": " + p.Message
	}
	m, e := v.Manifest, o.Export
	switch {
	case m.Export != e.Name:
		return nil, nil, errcode.E("reconcile", o.Prefix, ErrRefused, fmt.Errorf("the run there is of export %q, not %q", m.Export, e.Name))
	case m.Definition != "" && m.Definition != e.Fingerprint():
		return nil, nil, errcode.E("reconcile", o.Prefix, ErrRefused,
			fmt.Errorf("the definition of export %s is not the one run %s was made to (source, table or query, chunk key, mode, cursor column, format or value options changed): its chunks' SQL is not known", e.Name, m.RunID))
	}
	return m, broken, nil
}

// partFigures reads p's figures, or says why they cannot be read (reason).
func partFigures(ctx context.Context, s *store.Store, m *dataset.Manifest, p dataset.Part, broken string) (pf *PartFigures, reason string, err error) {
	switch {
	case broken != "":
		return nil, broken, nil
	case m.Format != dataset.FormatParquet && m.Format != "":
		return &PartFigures{Rows: p.Rows, NoColumns: "the part is " + string(m.Format) + ", which keeps no column statistics (its rows are the manifest's)"}, "", nil
	}
	pf, err = Footer(ctx, s, p)
	switch {
	case ctx.Err() != nil:
		return nil, "", ctx.Err()
	case err != nil:
		return nil, "its footer cannot be read: " + err.Error(), nil
	}
	return pf, "", nil
}

func (r *Report) add(c Chunk) {
	r.Chunks = append(r.Chunks, c)
	switch c.Status {
	case Match:
		r.Matched++
	case Mismatch:
		r.Mismatched++
	default:
		r.Unknown++
	}
}

// PartFigures are a part's figures as its footer states them.
type PartFigures struct {
	Rows      int64
	Columns   map[string]*ColumnStats // by top-level column name
	NoColumns string                  // set when the part has no column statistics at all: why
}

// ColumnStats are one column's statistics over every row group of a part.
type ColumnStats struct {
	Nested    bool  // more than one leaf, or a nested leaf: its null count is not the column's
	HasNulls  bool  // every row group states its null count
	Nulls     int64 // their sum
	HasMinMax bool  // every row group with a value states its min and max
	// Kind is the order the part's min and max are in: export.OrderInteger (INT32 or INT64,
	// in Min and Max), export.OrderFloat, OrderText (UTF-8 byte arrays) or OrderDecimal, in
	// MinText and MaxText (canonical, as export.ColumnFigures has them); "" for any other.
	Kind             export.Order
	Min, Max         *int64  // nil when no row group has a value
	MinText, MaxText *string // nil when no row group has a value
	MissingStat      string  // why HasNulls or HasMinMax is false

	scale    int32 // a decimal's
	lo, hi   any   // the extremes so far: float64, string or decimal128.Num
	extremes bool
}

// Footer reads p's Parquet footer from s (ranged reads of its tail, pinned to the part's
// ETag; no data page) and sums its statistics.
func Footer(ctx context.Context, s *store.Store, p dataset.Part) (*PartFigures, error) {
	return footer(&readerAt{ctx: ctx, s: s, key: p.Key, size: p.Size, etag: p.ETag})
}

func footer(ra *readerAt) (*PartFigures, error) {
	pr, err := file.NewParquetReader(ra)
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	md := pr.MetaData()
	pf := &PartFigures{Rows: md.NumRows, Columns: map[string]*ColumnStats{}}
	leaves := map[string]int{}
	for i := 0; i < md.Schema.NumColumns(); i++ {
		path := md.Schema.Column(i).ColumnPath()
		leaves[path[0]]++
		cs := &ColumnStats{HasNulls: true, HasMinMax: true, Nested: len(path) > 1}
		if pf.Columns[path[0]] != nil {
			cs = pf.Columns[path[0]]
		}
		cs.Nested = cs.Nested || leaves[path[0]] > 1
		cs.Kind, cs.scale = kindOf(md.Schema.Column(i))
		pf.Columns[path[0]] = cs
	}
	for g := 0; g < md.NumRowGroups(); g++ {
		rg := md.RowGroup(g)
		for i := 0; i < rg.NumColumns(); i++ {
			cc, err := rg.ColumnChunk(i)
			if err != nil {
				return nil, err
			}
			path := cc.PathInSchema()
			if len(path) == 0 {
				continue
			}
			addStats(pf.Columns[path[0]], cc, rg.NumRows())
		}
	}
	for _, cs := range pf.Columns {
		cs.finish()
	}
	return pf, nil
}

// kindOf is the order a leaf's statistics are in, and a decimal's scale.
func kindOf(c *schema.Column) (export.Order, int32) {
	lt := c.LogicalType()
	if d, ok := lt.(schema.DecimalLogicalType); ok {
		return export.OrderDecimal, d.Scale()
	}
	switch c.PhysicalType() {
	case parquet.Types.Int32, parquet.Types.Int64:
		return export.OrderInteger, 0
	case parquet.Types.Float, parquet.Types.Double:
		return export.OrderFloat, 0
	case parquet.Types.ByteArray:
		if _, ok := lt.(schema.StringLogicalType); ok {
			return export.OrderText, 0
		}
	}
	return "", 0
}

func addStats(cs *ColumnStats, cc *metadata.ColumnChunkMetaData, rows int64) {
	if cs == nil || cs.Nested {
		return
	}
	set, err := cc.StatsSet()
	var st metadata.TypedStatistics
	if set && err == nil {
		st, err = cc.Statistics()
	}
	if !set || err != nil || st == nil {
		cs.HasNulls, cs.HasMinMax, cs.MissingStat = false, false, "its footer has no statistics for it"
		return
	}
	if !st.HasNullCount() {
		cs.HasNulls, cs.MissingStat = false, "its footer has no null count for it"
	}
	cs.Nulls += st.NullCount()
	if cs.Kind == "" {
		return
	}
	if !st.HasMinMax() {
		if st.HasNullCount() && st.NullCount() == rows {
			return // only nulls: no min or max to state
		}
		cs.HasMinMax, cs.MissingStat = false, "its footer has no min and max for it"
		return
	}
	var lo, hi any
	switch t := st.(type) {
	case *metadata.Int32Statistics:
		lo, hi = int64(t.Min()), int64(t.Max())
	case *metadata.Int64Statistics:
		lo, hi = t.Min(), t.Max()
	case *metadata.Float32Statistics:
		lo, hi = float64(t.Min()), float64(t.Max())
	case *metadata.Float64Statistics:
		lo, hi = t.Min(), t.Max()
	case *metadata.ByteArrayStatistics:
		lo, hi = string(t.Min()), string(t.Max())
	case *metadata.FixedLenByteArrayStatistics:
		lo, hi = twosComplement(t.Min()), twosComplement(t.Max())
	default:
		cs.HasMinMax, cs.MissingStat = false, fmt.Sprintf("its footer's statistics for it are %T", st)
		return
	}
	if cs.Kind == export.OrderDecimal {
		lo, hi = decimalOf(lo), decimalOf(hi)
	}
	if !cs.extremes {
		cs.lo, cs.hi, cs.extremes = lo, hi, true
		return
	}
	if less(lo, cs.lo) {
		cs.lo = lo
	}
	if less(cs.hi, hi) {
		cs.hi = hi
	}
}

// finish states the extremes found in Min and Max, or MinText and MaxText.
func (cs *ColumnStats) finish() {
	if !cs.extremes || !cs.HasMinMax {
		return
	}
	if cs.Kind == export.OrderInteger {
		lo, hi := cs.lo.(int64), cs.hi.(int64)
		cs.Min, cs.Max = &lo, &hi
		return
	}
	text := func(v any) *string {
		var s string
		switch x := v.(type) {
		case float64:
			s = export.CanonicalFloat(x)
		case string:
			s = x
		case decimal128.Num:
			s = export.CanonicalDecimal(x, cs.scale)
		}
		return &s
	}
	cs.MinText, cs.MaxText = text(cs.lo), text(cs.hi)
}

// twosComplement is the big-endian two's complement integer of a decimal's bytes.
func twosComplement(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return n
}

// decimalOf is a decimal's unscaled value, stored as an integer or as bytes.
func decimalOf(v any) decimal128.Num {
	switch x := v.(type) {
	case int64:
		return decimal128.FromI64(x)
	case *big.Int:
		return decimal128.FromBigInt(x)
	}
	return decimal128.Num{}
}

func less(a, b any) bool {
	switch x := a.(type) {
	case int64:
		return x < b.(int64)
	case float64:
		return x < b.(float64)
	case string:
		return x < b.(string)
	case decimal128.Num:
		return x.Less(b.(decimal128.Num))
	}
	return false
}

// readerAt reads an object of a store by ranges, as a Parquet reader reads a file: the
// footer at its end, then nothing else.
type readerAt struct {
	ctx        context.Context
	s          *store.Store
	key, etag  string
	size, seek int64
	read       int64 // bytes read, for tests: the footer's, never the data pages'
}

func (r *readerAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.size {
		return 0, io.EOF
	}
	n := int64(len(p))
	if off+n > r.size {
		n = r.size - off
	}
	obj, err := r.s.Get(r.ctx, r.key, &store.GetOptions{Offset: off, Length: n, IfMatch: r.etag})
	if err != nil {
		return 0, err
	}
	defer obj.Close()
	got, err := io.ReadFull(obj, p[:n])
	r.read += int64(got)
	if err == nil && n < int64(len(p)) {
		err = io.EOF
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	return got, err
}

func (r *readerAt) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		r.seek = offset
	case io.SeekCurrent:
		r.seek += offset
	case io.SeekEnd:
		r.seek = r.size + offset
	}
	return r.seek, nil
}

func (r *readerAt) Read(p []byte) (int, error) {
	n, err := r.ReadAt(p, r.seek)
	r.seek += int64(n)
	return n, err
}
