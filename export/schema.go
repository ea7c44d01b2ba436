package export

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
)

// settleSchema fixes the run's columns before its first part, so that every part of a run
// has one schema: a new run decides which text columns are written as binary
// (Export.InvalidUTF8) and journals the schema; a resumed run takes the journaled schema and
// refuses to go on if the source's columns changed since (ErrSchemaChanged).
func (r *runner) settleSchema(ctx context.Context) error {
	if r.res.Resumed {
		prev, err := r.j.RunSchema(ctx, r.rec.RunID)
		if err != nil || prev == nil { // a run journaled before schemas were: nothing to hold it to
			return err
		}
		return adoptSchema(r.cols, prev, r.src.what(r.e), r.src.pg != nil, "the interrupted run's parts have another schema; run again without --resume")
	}
	if r.e.InvalidUTF8 == UTF8Binary {
		bad, err := r.src.invalidUTF8Columns(ctx, r.e, r.cols, r.window)
		if err != nil {
			return err
		}
		for i := range r.cols {
			if bad[r.cols[i].Name] {
				r.cols[i].Type, r.cols[i].rawBytes = arrow.BinaryTypes.Binary, r.src.pg != nil
				r.o.log().Warn("export: a text column holds bytes that are not UTF-8: it is written as binary",
					"export", r.e.Name, "run_id", r.rec.RunID, "column", r.cols[i].Name)
			}
		}
	}
	return r.j.SetRunSchema(ctx, r.rec.RunID, schemaColumns(r.cols))
}

// adoptSchema gives cols the Arrow types an earlier run wrote its parts with (a text column
// it found not UTF-8 stays binary), and refuses a source whose columns changed, saying why
// with remedy.
func adoptSchema(cols []Column, prev []SchemaColumn, where string, pg bool, remedy string) error {
	changed := func(format string, a ...any) error {
		return newErr("schema", where, ErrSchemaChanged, fmt.Errorf(format+": "+remedy, a...))
	}
	if len(prev) != len(cols) {
		return changed("%d columns now, %d when the run read it", len(cols), len(prev))
	}
	for i, p := range prev {
		c := &cols[i]
		switch {
		case c.Name != p.Name || c.DBType != p.Source:
			return changed("column %d is %q %s now, %q %s when the run read it", i+1, c.Name, c.DBType, p.Name, p.Source)
		case c.Type.String() == p.Type:
		case p.Type == arrow.BinaryTypes.Binary.String() && c.Type.ID() == arrow.STRING:
			c.Type, c.rawBytes = arrow.BinaryTypes.Binary, pg
		default:
			return changed("column %q is %s now, %s when the run read it", c.Name, c.Type, p.Type)
		}
	}
	return nil
}

// invalidUTF8Columns reads the text columns of the rows within w once and returns those
// holding a value that is not valid UTF-8. Only columns that can hold such values are read:
// SQLite's text columns (SQLite never checks), and a PostgreSQL database's only when it is
// SQL_ASCII (any other encoding is converted to UTF-8 by the server).
func (s *source) invalidUTF8Columns(ctx context.Context, e *Export, cols []Column, w window) (map[string]bool, error) {
	bad := map[string]bool{}
	names, exprs := s.textColumns(cols)
	if len(names) == 0 {
		return bad, nil
	}
	clause, args := s.where(w, nil, nil)
	rows, err := s.q().QueryContext(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM "+relation(e)+clause, args...)
	if err != nil {
		return nil, s.d.classify(err, s.what(e))
	}
	defer rows.Close()
	vals := make([]sql.RawBytes, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() && len(bad) < len(names) {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, s.d.classify(err, s.what(e))
		}
		for i, v := range vals {
			if !bad[names[i]] && !utf8.Valid(v) {
				bad[names[i]] = true
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.d.classify(err, s.what(e))
	}
	return bad, nil
}

// textColumns returns the columns whose values can be text that is not UTF-8, and how to
// select each as its bytes: SQLite's text columns (SQLite never checks), and a PostgreSQL
// database's text only when it is SQL_ASCII (the server converts any other encoding to UTF-8).
// A SQL_ASCII value is selected as convert_to(…, 'SQL_ASCII'), its bytes as stored: read as
// text, the server refuses to send bytes that are not UTF-8 (SQLSTATE 22021) without naming
// the row.
func (s *source) textColumns(cols []Column) (names, exprs []string) {
	if s.pg != nil && !s.pg.checkUTF8 {
		return nil, nil
	}
	for _, c := range cols {
		if c.Type.ID() != arrow.STRING && c.Type.ID() != arrow.EXTENSION || c.decimalText || c.Type == uuidType {
			continue
		}
		names = append(names, c.Name)
		if s.pg != nil {
			exprs = append(exprs, sqlASCIIBytes(quoteIdent(c.Name)))
		} else {
			exprs = append(exprs, s.d.selectExpr(quoteIdent(c.Name)))
		}
	}
	return names, exprs
}

// sqlASCIIBytes selects a SQL_ASCII database's column as the bytes it stores.
func sqlASCIIBytes(col string) string { return "convert_to(" + col + "::text, 'SQL_ASCII')" }

// locateNotUTF8 finds the first value of the rows of r within w that is not UTF-8, after
// PostgreSQL refused to send one (SQLSTATE 22021, naming no row): it reads the SQL_ASCII
// database's text columns as bytes, with the chunking key, and names the column, the row and
// the value. cause is returned when no such value is found.
func (s *source) locateNotUTF8(ctx context.Context, e *Export, cols []Column, r Range, w window, cause error) error {
	names, exprs := s.textColumns(cols)
	if len(names) == 0 {
		return cause
	}
	key := keyIndex(cols, e)
	q, args := s.query(e, []Column{cols[key]}, r, w)
	q = strings.Replace(q, "SELECT "+quoteIdent(e.ChunkKey)+" FROM", "SELECT "+quoteIdent(e.ChunkKey)+", "+strings.Join(exprs, ", ")+" FROM", 1)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return cause
	}
	defer rows.Close()
	var k any
	vals := make([][]byte, len(names))
	ptrs := append([]any{&k}, make([]any, len(names))...)
	for i := range vals {
		ptrs[i+1] = &vals[i]
	}
	for rows.Next() {
		if rows.Scan(ptrs...) != nil {
			return cause
		}
		for i, v := range vals {
			if v != nil && !utf8.Valid(v) {
				c := cols[slices.IndexFunc(cols, func(c Column) bool { return c.Name == names[i] })]
				return s.valueErr(e, c, describeValue(k), describeValue(v), refuse(ErrNotUTF8, "the database's encoding is SQL_ASCII"))
			}
		}
	}
	return cause
}
