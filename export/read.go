package export

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// schemaOf returns the Arrow schema of cols; every column is nullable.
func schemaOf(cols []Column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// readRange streams the rows of r to emit in record batches of at most batchRows rows, so a
// chunk in flight holds one batch in memory whatever its size. emit must not keep the batch.
func (s *source) readRange(ctx context.Context, e *Export, cols []Column, r Range, w window, batchRows int,
	emit func(arrow.RecordBatch) error) (int64, error) {
	if _, ok := s.d.(pgDialect); ok {
		return s.readPostgres(ctx, e, cols, r, w, batchRows, emit)
	}
	return s.readSQL(ctx, e, cols, r, w, batchRows, emit)
}

// readSQL is readRange through database/sql, one row of driver values at a time.
func (s *source) readSQL(ctx context.Context, e *Export, cols []Column, r Range, w window, batchRows int,
	emit func(arrow.RecordBatch) error) (int64, error) {
	q, args := s.query(e, cols, r, w)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, s.d.classify(err, s.what(e))
	}
	defer rows.Close()
	b := array.NewRecordBuilder(arrowMem, schemaOf(cols))
	defer b.Release()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var total int64
	n := 0
	flush := func() error {
		rec := b.NewRecordBatch()
		defer rec.Release()
		n = 0
		return emit(rec)
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return total, s.d.classify(err, s.what(e))
		}
		for i, v := range vals {
			if err := appendValue(b.Field(i), v); err != nil {
				return total, newErr("read", fmt.Sprintf("column %q of %s", cols[i].Name, s.what(e)), ErrSourceRead, err)
			}
		}
		total++
		if n++; n >= batchRows {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return total, s.d.classify(err, s.what(e))
	}
	if n > 0 || total == 0 {
		return total, flush()
	}
	return total, nil
}
