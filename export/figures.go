package export

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/wharfdata/wharf/dataset"
)

// ColumnFigures are one column's figures over one chunk's rows in the source.
type ColumnFigures struct {
	Name string
	// Found is false when the source has no column of this name any more.
	Found   bool
	NonNull int64
	// NonNullByConstraint is set when NonNull was not counted but is Rows by the column's
	// valid NOT NULL constraint in the source's catalog (a PostgreSQL table): the figure is
	// compared all the same.
	NonNullByConstraint bool
	// NonNullInexact, when set, is why NonNull is not the part's non-null count even for
	// unchanged rows: under infinity: null an infinite date or timestamp is written as NULL.
	NonNullInexact string
	// Order is how the column's Min and Max compare with a Parquet part's statistics, ""
	// when they were not asked (its type has no order that compares exactly: minMax).
	// OrderInteger sets Min and Max; the others MinText and MaxText, in the canonical text
	// of CanonicalFloat, CanonicalDecimal, or the text itself. All are nil when the chunk has
	// no non-null value.
	Order            Order
	Min, Max         *int64
	MinText, MaxText *string
}

// Order is how a column's min and max compare exactly with a Parquet part's statistics.
type Order string

const (
	// OrderInteger: the integers the statistics hold: an integer column (not PostgreSQL
	// money), or on PostgreSQL under infinity: refuse a date (days since 1970-01-01) or a
	// timestamp (microseconds since 1970-01-01 00:00, UTC for timestamptz).
	OrderInteger Order = "integer"
	// OrderFloat: a float column, compared as numbers (NaN, which Parquet statistics leave
	// out, is not compared).
	OrderFloat Order = "float"
	// OrderText: a text column in byte order (the order of Parquet's UTF-8 statistics): on
	// PostgreSQL text or varchar of a UTF8 or LATIN1 database, compared COLLATE "C"; on
	// SQLite a column of TEXT affinity, compared as BINARY.
	OrderText Order = "text"
	// OrderDecimal: a decimal(p,s) column (not PostgreSQL money), compared as numbers at the
	// column's scale.
	OrderDecimal Order = "decimal"
)

// CanonicalFloat is the text of v that a min or max of OrderFloat is compared in: the
// shortest that reads back as v, with -0 as 0.
func CanonicalFloat(v float64) string {
	if v == 0 {
		v = 0 // -0 and 0 are one value to compare
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// CanonicalDecimal is the text of the decimal of unscaled value n at scale that a min or max
// of OrderDecimal is compared in.
func CanonicalDecimal(n decimal128.Num, scale int32) string { return n.ToString(scale) }

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
// column, its min and max. On a PostgreSQL table (not a query), a column the catalog declares
// NOT NULL, by a valid constraint of an ordinary table without inheritance children (see
// tableQuery), is not counted: its non-null count is the row count
// (ColumnFigures.NonNullByConstraint); and the chunk key's min and max, where a btree index
// leads with it (and not within a delta run's window), are subqueries of the same statement
// that PostgreSQL answers from the index. It reads the source as it is now, outside any
// snapshot, with parallel queries at once (at least 1; above 1, each PostgreSQL session runs
// without parallel workers of its own), and returns the figures in m's part order.
func Figures(ctx context.Context, e *Export, m *dataset.Manifest, parallel int, getenv func(string) string) ([]ChunkFigures, error) {
	parallel = max(1, min(parallel, len(m.Parts)))
	var params []string
	if parallel > 1 {
		// The chunks are queried in parallel already: a PostgreSQL source's parallel workers
		// under each query would only contend with the other queries (measured: reconcile
		// 20% faster without them, bench/README.md "reconcile").
		params = []string{"max_parallel_workers_per_gather", "0"}
	}
	s, err := openSource(ctx, e, parallel, getenv, params...)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	cols, err := s.columns(ctx, e)
	if err != nil {
		return nil, err
	}
	facts, err := s.facts(ctx, e)
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
				if out[i], errs[i] = s.figures(ctx, e, cols, facts, m.Schema, m.Parts[i], w); errs[i] != nil {
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

// tableQuery describes the columns of the table $1 (its quoted name, resolved as the chunk
// queries resolve it): whether a NOT NULL constraint holds for every row (attnotnull, and no
// not-null constraint of the column NOT VALID: PostgreSQL 18 catalogs those, with attnotnull
// set; earlier versions have none; the relation is an ordinary table, since PostgreSQL does
// not enforce a foreign table's NOT NULL; and it has no inheritance children or partitions,
// whose rows the query reads too: before PostgreSQL 18 a child may drop the NOT NULL it
// inherited), and whether a valid btree index, not partial, leads with it.
const tableQuery = `SELECT a.attname,
  a.attnotnull AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conrelid = a.attrelid AND c.contype = 'n'
    AND NOT c.convalidated AND a.attnum = ANY (c.conkey))
    AND (SELECT r.relkind FROM pg_class r WHERE r.oid = a.attrelid) = 'r'
    AND NOT EXISTS (SELECT FROM pg_inherits h WHERE h.inhparent = a.attrelid),
  EXISTS (SELECT FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
    WHERE i.indrelid = a.attrelid AND i.indkey[0] = a.attnum AND i.indisvalid AND i.indpred IS NULL AND am.amname = 'btree')
FROM pg_attribute a WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped`

// tableFacts are what the source's catalog says of the columns of an export's table.
type tableFacts struct {
	notNull map[string]bool // a valid NOT NULL constraint: the non-null count is the row count
	indexed map[string]bool // a btree index leads with it: its min and max are two index probes
}

// facts reads tableQuery for e's table, on PostgreSQL; none for a query or on SQLite.
func (s *source) facts(ctx context.Context, e *Export) (tableFacts, error) {
	f := tableFacts{notNull: map[string]bool{}, indexed: map[string]bool{}}
	if s.pg == nil || e.Query != "" {
		return f, nil
	}
	rows, err := s.db.QueryContext(ctx, tableQuery, relation(e))
	if err != nil {
		return f, s.d.classify(err, s.what(e))
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var notNull, indexed bool
		if err := rows.Scan(&name, &notNull, &indexed); err != nil {
			return f, s.d.classify(err, s.what(e))
		}
		f.notNull[name], f.indexed[name] = notNull, indexed
	}
	if err := rows.Err(); err != nil {
		return f, s.d.classify(err, s.what(e))
	}
	return f, nil
}

func (s *source) figures(ctx context.Context, e *Export, cols []Column, facts tableFacts, schema []SchemaColumn, p Part, w window) (ChunkFigures, error) {
	f := ChunkFigures{Chunk: p.Chunk, Columns: make([]ColumnFigures, len(schema))}
	clause, args := s.chunkWhere(e, p.Range, w)
	rel := relation(e)
	aggregate := func(fn, arg string) string { return fn + "(" + arg + ")" }
	// The chunking key's min and max over the chunk's rows, where an index leads with it: two
	// probes of the index (PostgreSQL plans a MIN or MAX alone so), not two aggregates of
	// every row. Not within a delta run's window, whose rows the index does not order.
	byIndex := func(fn, arg string) string { return "(SELECT " + fn + "(" + arg + ") FROM " + rel + clause + ")" }
	exprs := []string{"COUNT(*)"}
	dest := []any{&f.Rows}
	mins := make([]any, len(schema))
	maxs := make([]any, len(schema))
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
		if cf.NonNullByConstraint = facts.notNull[sc.Name]; !cf.NonNullByConstraint {
			exprs = append(exprs, "COUNT("+q+")")
			dest = append(dest, &cf.NonNull)
		}
		agg := aggregate
		if sc.Name == e.ChunkKey && facts.indexed[sc.Name] && w.Column == "" {
			agg = byIndex
		}
		if lo, hi, order := s.minMax(e, cols[j], q, agg); order != "" {
			cf.Order = order
			exprs = append(exprs, lo, hi)
			dest = append(dest, &mins[i], &maxs[i])
		}
	}
	q := fmt.Sprintf("SELECT %s FROM %s%s", strings.Join(exprs, ", "), rel, clause)
	if err := s.db.QueryRowContext(ctx, q, args...).Scan(dest...); err != nil {
		return f, s.d.classify(err, s.what(e))
	}
	for i := range f.Columns {
		cf := &f.Columns[i]
		if cf.NonNullByConstraint {
			cf.NonNull = f.Rows
		}
		if cf.Order == "" {
			continue
		}
		var err error
		if cf.Order == OrderInteger {
			cf.Min, err = integerExtreme(mins[i])
			if err == nil {
				cf.Max, err = integerExtreme(maxs[i])
			}
		} else {
			t := cols[slices.IndexFunc(cols, func(c Column) bool { return c.Name == cf.Name })].Type
			cf.MinText, err = textExtreme(cf.Order, t, mins[i])
			if err == nil {
				cf.MaxText, err = textExtreme(cf.Order, t, maxs[i])
			}
		}
		if err != nil {
			return f, newErr("reconcile", s.what(e), ErrSourceRead, fmt.Errorf("the min or max of column %s of chunk %d: %w", cf.Name, p.Chunk, err))
		}
	}
	return f, nil
}

// integerExtreme is a MIN or MAX of OrderInteger as the driver returned it, converted as
// export converts the column's values.
func integerExtreme(v any) (*int64, error) {
	if v == nil {
		return nil, nil
	}
	n, err := intValue(textOf(v))
	if err != nil {
		return nil, err
	}
	return &n, nil
}

func textOf(v any) any {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return v
}

// textExtreme is a MIN or MAX of order (not OrderInteger) of a column of Arrow type t, as the
// driver returned it, in its canonical text.
func textExtreme(order Order, t arrow.DataType, v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	v = textOf(v)
	var out string
	switch order {
	case OrderFloat:
		f, err := floatValue(v)
		if err != nil {
			return nil, err
		}
		if t.ID() == arrow.FLOAT32 {
			f = float64(float32(f)) // the float4 the part holds
		}
		out = CanonicalFloat(f)
	case OrderText:
		x, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%T is not text", v)
		}
		out = x
	case OrderDecimal:
		dt, ok := t.(*arrow.Decimal128Type)
		if !ok {
			return nil, fmt.Errorf("column type %s is not a decimal", t)
		}
		d, err := exactDecimal(v)
		if err != nil {
			return nil, err
		}
		n, err := d.decimal128(dt.Scale)
		if err != nil {
			return nil, err
		}
		out = CanonicalDecimal(n, dt.Scale)
	}
	return &out, nil
}

// minMax returns the expressions of c's min and max, made by agg (the aggregate fn of the
// expression arg), and the order they compare in with a Parquet part's statistics ("" when
// none compares exactly). An OrderInteger date or timestamp (PostgreSQL, under infinity:
// refuse) is the integer its part holds, and its infinite extreme, had one been added since
// the run, is NULL.
func (s *source) minMax(e *Export, c Column, q string, agg func(fn, arg string) string) (lo, hi string, order Order) {
	both := func(arg, suffix string) (string, string) { return agg("MIN", arg) + suffix, agg("MAX", arg) + suffix }
	switch c.Type.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		if c.money || c.rawBytes {
			return "", "", ""
		}
		lo, hi = both(q, "")
		return lo, hi, OrderInteger
	case arrow.FLOAT32, arrow.FLOAT64:
		lo, hi = both(q, "")
		return lo, hi, OrderFloat
	case arrow.STRING, arrow.LARGE_STRING:
		switch {
		case c.decimalText || c.rawBytes:
			return "", "", ""
		case s.pg != nil:
			if enc := s.pg.settings["server_encoding"]; (c.oid != pgtype.TextOID && c.oid != pgtype.VarcharOID) || (enc != "UTF8" && enc != "LATIN1") {
				return "", "", ""
			}
			lo, hi = both(q+` COLLATE "C"`, "")
		default:
			if !sqliteTextAffinity(c.DBType) {
				return "", "", ""
			}
			lo, hi = both("CAST("+q+" AS TEXT) COLLATE BINARY", "")
		}
		return lo, hi, OrderText
	case arrow.DECIMAL128:
		if c.money {
			return "", "", ""
		}
		if s.pg != nil {
			lo, hi = both(q, "::text")
		} else {
			lo, hi = both(q, "")
		}
		return lo, hi, OrderDecimal
	case arrow.DATE32, arrow.TIMESTAMP:
		if s.pg == nil || e.Infinity != InfinityRefuse {
			return "", "", ""
		}
		if t, isTS := c.Type.(*arrow.TimestampType); isTS && t.Unit != arrow.Microsecond {
			return "", "", ""
		}
	default:
		return "", "", ""
	}
	f := func(fn string) string {
		v := agg(fn, q)
		if c.Type.ID() == arrow.DATE32 {
			return "CASE WHEN isfinite(" + v + ") THEN " + v + " - DATE '1970-01-01' END"
		}
		return "CASE WHEN isfinite(" + v + ") THEN (EXTRACT(EPOCH FROM " + v + ") * 1000000)::bigint END"
	}
	return f("MIN"), f("MAX"), OrderInteger
}

// sqliteTextAffinity reports whether a SQLite column declared decl has TEXT affinity (and
// sqliteType makes it a string): its values are text, or blobs its CAST makes text.
func sqliteTextAffinity(decl string) bool {
	d := strings.ToUpper(decl)
	return !strings.Contains(d, "INT") && (strings.Contains(d, "CHAR") || strings.Contains(d, "CLOB") || strings.Contains(d, "TEXT"))
}
