package export

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// dialect is what differs between the SQL sources.
type dialect interface {
	name() string                          // "sqlite", "postgres"
	param(n int) string                    // the n-th (1-based) bind parameter
	selectExpr(quotedCol string) string    // a column as the rows are read
	boundExpr(quotedCol string) string     // a column as its raw, comparable value
	classify(err error, what string) error // maps a driver error to an export error
}

// source reads one export's rows from a database/sql database, chunk by chunk.
type source struct {
	db   *sql.DB
	d    dialect
	desc string     // "postgres 127.0.0.1:5432/db" or "sqlite /path.db": never a password
	pg   *pgSession // PostgreSQL: the pinned session settings; nil for SQLite
	snap *snapTx    // consistency: snapshot: the run's snapshot, once taken
}

// Close ends the run's snapshot and closes the connection pool.
func (s *source) Close() error {
	s.endSnapshot()
	return s.db.Close()
}

// relation is the FROM clause of an export: a quoted table, or a query as a subquery,
// without the semicolons and comments that may end it (queryBody). The closing parenthesis
// goes on a line of its own all the same.
func relation(e *Export) string {
	if e.Query != "" {
		return "(" + queryBody(e.Query) + "\n) AS wharf_q"
	}
	parts, err := tableName(e.Table)
	if err != nil { // Check refuses it; quote it whole rather than guess
		parts = []string{e.Table}
	}
	for i, p := range parts {
		parts[i] = quoteIdent(p)
	}
	return strings.Join(parts, ".")
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (s *source) what(e *Export) string {
	if e.Table != "" {
		return fmt.Sprintf("table %q in %s", e.Table, s.desc)
	}
	return "query of export " + e.Name + " in " + s.desc
}

// columns returns the export's columns by running its relation with no rows, and checks the
// chunking key and cursor column exist and can order rows, and that every column given a
// time unit is a date or timestamp column.
func (s *source) columns(ctx context.Context, e *Export) ([]Column, error) {
	q := "SELECT * FROM " + relation(e) + " LIMIT 0"
	var cols []Column
	var err error
	if s.pg != nil {
		cols, err = s.describeQuery(ctx, q)
	} else {
		cols, err = s.describeSQLite(ctx, q)
	}
	if err != nil {
		return nil, s.d.classify(err, s.what(e))
	}
	if err := applyTimeUnits(cols, e, s.what(e)); err != nil {
		return nil, err
	}
	for _, c := range []struct{ field, name string }{{"chunk_key", e.ChunkKey}, {"cursor_column", e.CursorColumn}} {
		if c.name == "" {
			continue
		}
		if err := checkKeyColumn(cols, c.field, c.name, s.what(e)); err != nil {
			return nil, err
		}
	}
	return cols, nil
}

// describeSQLite returns the columns of a SQLite query: the declared type of each (empty for
// an expression) and its Arrow type.
func (s *source) describeSQLite(ctx context.Context, q string) ([]Column, error) {
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	cols := make([]Column, len(cts))
	for i, ct := range cts {
		t, dec := sqliteType(ct.DatabaseTypeName())
		cols[i] = Column{Name: ct.Name(), DBType: ct.DatabaseTypeName(), Type: t, decimalText: dec}
	}
	return cols, nil
}

// applyTimeUnits sets the unit of each column Export.TimeUnits names; a name that is not a
// date or timestamp column of the export is a configuration error.
func applyTimeUnits(cols []Column, e *Export, where string) error {
	for name, unit := range e.TimeUnits {
		i := slices.IndexFunc(cols, func(c Column) bool { return c.Name == name })
		switch {
		case i < 0:
			return newErr("schema", "time_units."+name, ErrConfig, fmt.Errorf("no column %q in %s", name, where))
		case keyKindOf(cols[i].Type) != keyTime:
			return newErr("schema", "time_units."+name, ErrConfig,
				fmt.Errorf("column %q of %s is %s, not a date or timestamp column", name, where, typeLabel(cols[i])))
		}
		cols[i].unit = unit
	}
	return nil
}

func checkKeyColumn(cols []Column, field, name, where string) error {
	for _, c := range cols {
		if c.Name != name {
			continue
		}
		if keyKindOf(c.Type) == keyNone {
			return newErr("schema", field+" "+name, ErrChunkKey,
				fmt.Errorf("column %q of %s has type %s: want an integer or timestamp column", name, where, typeLabel(c)))
		}
		return nil
	}
	return newErr("schema", field+" "+name, ErrSourceNotFound, fmt.Errorf("no column %q in %s", name, where))
}

func typeLabel(c Column) string {
	if c.DBType != "" {
		return c.DBType
	}
	return c.Type.String()
}

// window is the delta filter: cursor > After and cursor <= UpTo (each when set).
type window struct {
	Column string
	After  Bound
	UpTo   Bound
	Empty  bool // selects no rows
}

// where builds the WHERE clause for conditions and the window, numbering parameters from 1.
func (s *source) where(w window, conds []string, args []any) (string, []any) {
	if w.Empty {
		conds = append(conds, "1 = 0")
	}
	if w.Column != "" {
		c := quoteIdent(w.Column)
		if !w.After.IsZero() {
			args = append(args, w.After.Value())
			conds = append(conds, fmt.Sprintf("%s > %s", c, s.d.param(len(args))))
		}
		if !w.UpTo.IsZero() {
			args = append(args, w.UpTo.Value())
			conds = append(conds, fmt.Sprintf("%s <= %s", c, s.d.param(len(args))))
		}
	}
	if len(conds) == 0 {
		return "", args
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// max returns the largest value of col within w, or a zero Bound when there is none.
func (s *source) max(ctx context.Context, e *Export, col string, w window) (Bound, error) {
	q := quoteIdent(col)
	clause, args := s.where(w, []string{q + " IS NOT NULL"}, nil)
	query := fmt.Sprintf("SELECT %s FROM %s%s ORDER BY %s DESC LIMIT 1", s.d.boundExpr(q), relation(e), clause, q)
	return s.bound(ctx, e, query, args)
}

func (s *source) bound(ctx context.Context, e *Export, query string, args []any) (Bound, error) {
	var v any
	err := s.q().QueryRowContext(ctx, query, args...).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return Bound{}, nil
	}
	if err != nil {
		return Bound{}, s.d.classify(err, s.what(e))
	}
	return boundOf(v)
}

// ranges is a plan built one range at a time: ranges of at most e.ChunkRows rows of the
// chunking key within w, in key order (more rows when one key value repeats across a
// boundary), then one range for NULL keys if there are any. Each range costs the source an
// index scan of its rows, so a run plans while its first chunks are read.
type ranges struct {
	s       *source
	e       *Export
	w       window
	lo      Bound // the first key of the next range; zero when the keyed ranges are done
	started bool
	after   *Range // the last range of a plan being continued; nil for a new plan
	done    bool
}

// planRanges returns the plan of the rows within w that follows after: the whole plan
// when after is nil, the rest of an interrupted one otherwise.
func (s *source) planRanges(e *Export, w window, after *Range) *ranges {
	return &ranges{s: s, e: e, w: w, after: after}
}

// next returns the next range of the plan; ok is false once there are no more.
func (p *ranges) next(ctx context.Context) (r Range, ok bool, err error) {
	if p.done {
		return Range{}, false, nil
	}
	if !p.started {
		p.started = true
		switch {
		case p.after == nil:
			p.lo, err = p.s.keyAfter(ctx, p.e, p.w, Bound{})
		case p.after.Null: // the NULL range is always the last
			p.done = true
			return Range{}, false, nil
		default:
			p.lo, err = p.s.keyAfter(ctx, p.e, p.w, p.after.Hi)
		}
		if err != nil {
			return Range{}, false, err
		}
	}
	if !p.lo.IsZero() {
		r, p.lo, err = p.s.nextRange(ctx, p.e, p.w, p.lo)
		return r, err == nil, err
	}
	p.done = true
	nulls, err := p.s.hasNullKeys(ctx, p.e, p.w)
	return Range{Null: true}, nulls && err == nil, err
}

// keyAfter returns the smallest chunking key within w greater than after (any key when after
// is zero), or a zero Bound when there is none.
func (s *source) keyAfter(ctx context.Context, e *Export, w window, after Bound) (Bound, error) {
	k := quoteIdent(e.ChunkKey)
	conds, args := []string{k + " IS NOT NULL"}, []any(nil)
	if !after.IsZero() {
		conds, args = []string{fmt.Sprintf("%s > %s", k, s.d.param(1))}, []any{after.Value()}
	}
	clause, args := s.where(w, conds, args)
	q := fmt.Sprintf("SELECT %s FROM %s%s ORDER BY %s LIMIT 1", s.d.boundExpr(k), relation(e), clause, k)
	return s.bound(ctx, e, q, args)
}

// nextRange returns the range starting at lo and the first key after it (zero at the end).
func (s *source) nextRange(ctx context.Context, e *Export, w window, lo Bound) (Range, Bound, error) {
	k := quoteIdent(e.ChunkKey)
	clause, args := s.where(w, []string{fmt.Sprintf("%s >= %s", k, s.d.param(1))}, []any{lo.Value()})
	q := fmt.Sprintf("SELECT %s FROM %s%s ORDER BY %s LIMIT 1 OFFSET %d", s.d.boundExpr(k), relation(e), clause, k, e.ChunkRows-1)
	hi, err := s.bound(ctx, e, q, args)
	if err != nil {
		return Range{}, Bound{}, err
	}
	if hi.IsZero() { // fewer than ChunkRows rows left: the last range
		hi, err = s.max(ctx, e, e.ChunkKey, w)
		return Range{Lo: lo, Hi: hi}, Bound{}, err
	}
	next, err := s.keyAfter(ctx, e, w, hi)
	return Range{Lo: lo, Hi: hi}, next, err
}

// hasNullKeys reports whether any row within w has a NULL chunking key.
func (s *source) hasNullKeys(ctx context.Context, e *Export, w window) (bool, error) {
	clause, args := s.where(w, []string{quoteIdent(e.ChunkKey) + " IS NULL"}, nil)
	var n int64
	q := fmt.Sprintf("SELECT COUNT(*) FROM (SELECT 1 FROM %s%s LIMIT 1) AS nulls", relation(e), clause)
	if err := s.q().QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return false, s.d.classify(err, s.what(e))
	}
	return n > 0, nil
}

// chunkWhere returns the WHERE clause and arguments that select the rows of r within w: the
// one a chunk is read with, and reconciled with (Figures).
func (s *source) chunkWhere(e *Export, r Range, w window) (string, []any) {
	k := quoteIdent(e.ChunkKey)
	var conds []string
	var args []any
	if r.Null {
		conds = []string{k + " IS NULL"}
	} else {
		args = []any{r.Lo.Value(), r.Hi.Value()}
		conds = []string{fmt.Sprintf("%s >= %s", k, s.d.param(1)), fmt.Sprintf("%s <= %s", k, s.d.param(2))}
	}
	return s.where(w, conds, args)
}

// query returns the statement and arguments that read the rows of r within w.
func (s *source) query(e *Export, cols []Column, r Range, w window) (string, []any) {
	k := quoteIdent(e.ChunkKey)
	clause, args := s.chunkWhere(e, r, w)
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = s.d.selectExpr(quoteIdent(c.Name))
		if c.rawBytes {
			names[i] = sqlASCIIBytes(quoteIdent(c.Name))
		}
	}
	return fmt.Sprintf("SELECT %s FROM %s%s ORDER BY %s", strings.Join(names, ", "), relation(e), clause, k), args
}
