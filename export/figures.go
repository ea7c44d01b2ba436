package export

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/wharfdata/wharf/dataset"
)

// ColumnFigures are one column's figures over one chunk's rows in the source.
type ColumnFigures struct {
	Name string
	// Found is false when the source has no column of this name any more.
	Found   bool
	NonNull int64
	// NonNullInexact, when set, is why NonNull is not the part's non-null count even for
	// unchanged rows: under infinity: null an infinite date or timestamp is written as NULL.
	NonNullInexact string
	// Ordered is set for a column whose Min and Max were asked, as the integers a Parquet
	// part's statistics hold (minMax): an integer column (not PostgreSQL money), or a
	// PostgreSQL date or timestamp under infinity: refuse. Min and Max are nil when the chunk
	// has no non-null value.
	Ordered  bool
	Min, Max *int64
}

// ChunkFigures are the source's figures for the rows one chunk of a run read.
type ChunkFigures struct {
	Chunk   int
	Rows    int64
	Columns []ColumnFigures // in the manifest's schema order
}

// Fingerprint is the fingerprint of e's definition as a run records it in its manifest
// (Manifest.Definition): two runs with one fingerprint read the same rows the same way.
func (e *Export) Fingerprint() string { return definitionOf(e).Fingerprint }

// Figures queries e's source once per part of m, with the WHERE clause that read the part's
// chunk (its range of the chunking key, within the run's cursor window for a delta run):
// the row count and, for every column of m's schema, its non-null count and, for an ordered
// column, its min and max. It reads the source as it is now, outside any snapshot, with
// parallel queries at once (at least 1), and returns the figures in m's part order.
func Figures(ctx context.Context, e *Export, m *dataset.Manifest, parallel int, getenv func(string) string) ([]ChunkFigures, error) {
	parallel = max(1, min(parallel, len(m.Parts)))
	s, err := openSource(ctx, e, parallel, getenv)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	cols, err := s.columns(ctx, e)
	if err != nil {
		return nil, err
	}
	var w window
	if m.Cursor != nil {
		w = window{Column: m.Cursor.Column, After: m.Cursor.From, UpTo: m.Cursor.To, Empty: m.Cursor.To.IsZero()}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]ChunkFigures, len(m.Parts))
	errs := make([]error, len(m.Parts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for i := range next {
				if out[i], errs[i] = s.figures(ctx, e, cols, m.Schema, m.Parts[i], w); errs[i] != nil {
					cancel()
				}
			}
		})
	}
	for i := range m.Parts {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs { // the first failure in part order, before any cancellation it caused
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, ctx.Err()
}

func (s *source) figures(ctx context.Context, e *Export, cols []Column, schema []SchemaColumn, p Part, w window) (ChunkFigures, error) {
	f := ChunkFigures{Chunk: p.Chunk, Columns: make([]ColumnFigures, len(schema))}
	exprs := []string{"COUNT(*)"}
	dest := []any{&f.Rows}
	mins := make([]sql.NullInt64, len(schema))
	maxs := make([]sql.NullInt64, len(schema))
	for i, sc := range schema {
		cf := &f.Columns[i]
		cf.Name = sc.Name
		j := -1
		for k := range cols {
			if cols[k].Name == sc.Name {
				j = k
			}
		}
		if j < 0 {
			continue
		}
		cf.Found = true
		if e.Infinity == InfinityNull && keyKindOf(cols[j].Type) == keyTime {
			cf.NonNullInexact = "infinity: null writes an infinite value as NULL"
		}
		q := quoteIdent(sc.Name)
		exprs = append(exprs, "COUNT("+q+")")
		dest = append(dest, &cf.NonNull)
		if lo, hi, ok := s.minMax(e, cols[j], q); ok {
			cf.Ordered = true
			exprs = append(exprs, lo, hi)
			dest = append(dest, &mins[i], &maxs[i])
		}
	}
	clause, args := s.chunkWhere(e, p.Range, w)
	q := fmt.Sprintf("SELECT %s FROM %s%s", strings.Join(exprs, ", "), relation(e), clause)
	if err := s.db.QueryRowContext(ctx, q, args...).Scan(dest...); err != nil {
		return f, s.d.classify(err, s.what(e))
	}
	for i := range f.Columns {
		if mins[i].Valid {
			f.Columns[i].Min = &mins[i].Int64
		}
		if maxs[i].Valid {
			f.Columns[i].Max = &maxs[i].Int64
		}
	}
	return f, nil
}

// minMax returns the expressions of c's min and max as the integers a Parquet part's
// statistics hold, and whether they compare exactly: an integer column written as it is
// read; and on PostgreSQL, under infinity: refuse, a date (days since 1970-01-01) or a
// timestamp (microseconds since 1970-01-01 00:00, UTC for timestamptz), whose infinite
// extreme, had one been added since the run, is NULL.
func (s *source) minMax(e *Export, c Column, q string) (lo, hi string, ok bool) {
	switch c.Type.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return "MIN(" + q + ")", "MAX(" + q + ")", !c.money && !c.rawBytes
	case arrow.DATE32, arrow.TIMESTAMP:
		if s.pg == nil || e.Infinity != InfinityRefuse {
			return "", "", false
		}
		if t, isTS := c.Type.(*arrow.TimestampType); isTS && t.Unit != arrow.Microsecond {
			return "", "", false
		}
	default:
		return "", "", false
	}
	f := func(agg string) string {
		v := agg + "(" + q + ")"
		if c.Type.ID() == arrow.DATE32 {
			return "CASE WHEN isfinite(" + v + ") THEN " + v + " - DATE '1970-01-01' END"
		}
		return "CASE WHEN isfinite(" + v + ") THEN (EXTRACT(EPOCH FROM " + v + ") * 1000000)::bigint END"
	}
	return f("MIN"), f("MAX"), true
}
