package export

import (
	"context"
	"errors"
	"slices"
	"strings"

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

func (e *Export) rules() valueRules { return valueRules{infinity: e.Infinity} }

// maxBatchBytes bounds a record batch by the bytes of its values as well as by its rows, so
// that memory per chunk in flight does not grow with the width of the rows (16,384 rows of
// 100 KiB text would be 1.6 GiB). (A variable for the test that shows it.)
var maxBatchBytes = 8 << 20

// valueSize is about the bytes a driver value takes in a batch.
func valueSize(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []byte:
		return len(x)
	}
	return 8
}

// keyIndex is the index of the chunking key among cols, or -1.
func keyIndex(cols []Column, e *Export) int {
	return slices.IndexFunc(cols, func(c Column) bool { return c.Name == e.ChunkKey })
}

func rowKey(vals []any, key int) string {
	if key < 0 {
		return "?"
	}
	return describeValue(vals[key])
}

// valueErr names a value that cannot be written: the table, the column, the row's chunk key
// and the value, with the reason (a *refusal) or the conversion's error.
func (s *source) valueErr(e *Export, c Column, row, value string, err error) error {
	ve := &ValueError{Column: c.Name, Row: row, Value: value, Reason: ErrBadValue, Detail: err.Error()}
	var r *refusal
	if errors.As(err, &r) {
		ve.Reason, ve.Detail = r.reason, r.detail
	}
	if ve.Reason == ErrNotUTF8 && e.InvalidUTF8 == UTF8Refuse {
		ve.Detail = strings.TrimPrefix(ve.Detail+"; invalid_utf8: binary writes such a column as bytes", "; ")
	}
	return newErr("read", s.what(e), ErrValueRefused, ve)
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
	rows, err := s.q().QueryContext(ctx, q, args...)
	if err != nil {
		return 0, s.d.classify(err, s.what(e))
	}
	defer rows.Close()
	b := array.NewRecordBuilder(arrowMem, schemaOf(cols))
	defer b.Release()
	convs := make([]convFunc, len(cols))
	for i := range cols {
		convs[i] = cols[i].converter(e.rules())
	}
	key := keyIndex(cols, e)
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var total int64
	n, size := 0, 0
	flush := func() error {
		rec := b.NewRecordBatch()
		defer rec.Release()
		n, size = 0, 0
		return emit(rec)
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return total, s.d.classify(err, s.what(e))
		}
		for i, v := range vals {
			if v == nil {
				b.Field(i).AppendNull()
				continue
			}
			if err := convs[i](b.Field(i), v); err != nil {
				return total, s.valueErr(e, cols[i], rowKey(vals, key), describeValue(v), err)
			}
			size += valueSize(v)
		}
		total++
		if n++; n >= batchRows || size >= maxBatchBytes {
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
