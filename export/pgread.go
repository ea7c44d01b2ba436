package export

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgreSQL's binary epoch (2000-01-01) in Unix microseconds and days.
const (
	pgEpochMicros = 946_684_800_000_000
	pgEpochDays   = 10_957
)

// pgBinaryOIDs are the types read in PostgreSQL's binary format and decoded here without a
// per-value allocation; every other type is read as its text form, as database/sql gave it.
var pgBinaryOIDs = pgx.QueryResultFormatsByOID{
	pgtype.Int2OID: pgx.BinaryFormatCode, pgtype.Int4OID: pgx.BinaryFormatCode,
	pgtype.Int8OID: pgx.BinaryFormatCode, pgtype.Float4OID: pgx.BinaryFormatCode,
	pgtype.Float8OID: pgx.BinaryFormatCode, pgtype.BoolOID: pgx.BinaryFormatCode,
	pgtype.ByteaOID: pgx.BinaryFormatCode, pgtype.DateOID: pgx.BinaryFormatCode,
	pgtype.TimestampOID: pgx.BinaryFormatCode, pgtype.TimestamptzOID: pgx.BinaryFormatCode,
	pgtype.UUIDOID: pgx.BinaryFormatCode,
}

// pgDecoder appends one non-NULL raw value to its column's builder.
type pgDecoder func(b array.Builder, raw []byte) error

// readPostgres is readRange for PostgreSQL: it reads through pgx's own connection, in binary
// format where that is cheaper, and appends the raw values to the builders directly.
func (s *source) readPostgres(ctx context.Context, e *Export, cols []Column, r Range, w window, batchRows int,
	emit func(arrow.RecordBatch) error) (int64, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, s.d.classify(err, s.what(e))
	}
	defer conn.Close()
	var total int64
	err = conn.Raw(func(dc any) error {
		pc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres driver connection is %T", dc)
		}
		var rerr error
		total, rerr = s.readPgx(ctx, pc.Conn(), e, cols, r, w, batchRows, emit)
		return rerr
	})
	return total, err
}

func (s *source) readPgx(ctx context.Context, pc *pgx.Conn, e *Export, cols []Column, r Range, w window, batchRows int,
	emit func(arrow.RecordBatch) error) (int64, error) {
	q, args := s.query(e, cols, r, w)
	rows, err := pc.Query(ctx, q, append([]any{pgBinaryOIDs}, args...)...)
	if err != nil {
		return 0, s.d.classify(err, s.what(e))
	}
	defer rows.Close()
	b := array.NewRecordBuilder(arrowMem, schemaOf(cols))
	defer b.Release()
	fds := rows.FieldDescriptions()
	if len(fds) != len(cols) {
		return 0, newErr("read", s.what(e), ErrSourceRead, fmt.Errorf("query returned %d columns, want %d", len(fds), len(cols)))
	}
	decs := make([]pgDecoder, len(cols))
	for i := range cols {
		decs[i] = pgDecoderFor(pc.TypeMap(), fds[i], b.Field(i))
	}
	reserve := func() {
		for _, f := range b.Fields() {
			f.Reserve(batchRows) // one allocation per batch, instead of regrowing by doubling
		}
	}
	reserve()
	var total int64
	n := 0
	for rows.Next() {
		for i, raw := range rows.RawValues() {
			if raw == nil {
				b.Field(i).AppendNull()
				continue
			}
			if err := decs[i](b.Field(i), raw); err != nil {
				return total, newErr("read", fmt.Sprintf("column %q of %s", cols[i].Name, s.what(e)), ErrSourceRead, err)
			}
		}
		total++
		if n++; n >= batchRows {
			if err := emitBatch(b, emit); err != nil {
				return total, err
			}
			n = 0
			reserve()
		}
	}
	if err := rows.Err(); err != nil {
		return total, s.d.classify(err, s.what(e))
	}
	if n > 0 || total == 0 {
		return total, emitBatch(b, emit)
	}
	return total, nil
}

func emitBatch(b *array.RecordBuilder, emit func(arrow.RecordBatch) error) error {
	rec := b.NewRecordBatch()
	defer rec.Release()
	return emit(rec)
}

// pgDecoderFor picks the decoder of a column from its wire type and format and its builder.
func pgDecoderFor(m *pgtype.Map, fd pgconn.FieldDescription, b array.Builder) pgDecoder {
	if fd.Format == pgx.TextFormatCode {
		return textDecoder(b)
	}
	if d := binaryDecoder(fd.DataTypeOID, b); d != nil {
		return d
	}
	return func(b array.Builder, raw []byte) error { // a binary type with an unexpected builder
		t, ok := m.TypeForOID(fd.DataTypeOID)
		if !ok {
			return fmt.Errorf("no decoder for type oid %d", fd.DataTypeOID)
		}
		v, err := t.Codec.DecodeValue(m, fd.DataTypeOID, fd.Format, raw)
		if err != nil {
			return err
		}
		return appendValue(b, v)
	}
}

// textDecoder appends a value in PostgreSQL's text form.
func textDecoder(b array.Builder) pgDecoder {
	switch b.(type) {
	case *array.StringBuilder:
		return func(b array.Builder, raw []byte) error {
			b.(*array.StringBuilder).BinaryBuilder.Append(raw)
			return nil
		}
	case *array.Decimal128Builder:
		return func(b array.Builder, raw []byte) error { return appendDecimalText(b.(*array.Decimal128Builder), raw) }
	}
	return func(b array.Builder, raw []byte) error { return appendValue(b, string(raw)) }
}

var errBinaryLength = errors.New("unexpected binary value length")

// binaryDecoder returns the decoder of a binary-format oid into b, or nil if there is none.
func binaryDecoder(oid uint32, b array.Builder) pgDecoder {
	fixed := func(size int, f func(b array.Builder, raw []byte) error) pgDecoder {
		return func(b array.Builder, raw []byte) error {
			if len(raw) != size {
				return fmt.Errorf("%w: %d bytes, want %d", errBinaryLength, len(raw), size)
			}
			return f(b, raw)
		}
	}
	be := binary.BigEndian
	switch {
	case oid == pgtype.Int2OID && is[*array.Int16Builder](b):
		return fixed(2, func(b array.Builder, raw []byte) error {
			b.(*array.Int16Builder).Append(int16(be.Uint16(raw)))
			return nil
		})
	case oid == pgtype.Int4OID && is[*array.Int32Builder](b):
		return fixed(4, func(b array.Builder, raw []byte) error {
			b.(*array.Int32Builder).Append(int32(be.Uint32(raw)))
			return nil
		})
	case oid == pgtype.Int8OID && is[*array.Int64Builder](b):
		return fixed(8, func(b array.Builder, raw []byte) error {
			b.(*array.Int64Builder).Append(int64(be.Uint64(raw)))
			return nil
		})
	case oid == pgtype.Float4OID && is[*array.Float32Builder](b):
		return fixed(4, func(b array.Builder, raw []byte) error {
			b.(*array.Float32Builder).Append(math.Float32frombits(be.Uint32(raw)))
			return nil
		})
	case oid == pgtype.Float8OID && is[*array.Float64Builder](b):
		return fixed(8, func(b array.Builder, raw []byte) error {
			b.(*array.Float64Builder).Append(math.Float64frombits(be.Uint64(raw)))
			return nil
		})
	}
	return binaryDecoder2(oid, b, fixed)
}

func binaryDecoder2(oid uint32, b array.Builder, fixed func(int, func(array.Builder, []byte) error) pgDecoder) pgDecoder {
	be := binary.BigEndian
	switch {
	case oid == pgtype.BoolOID && is[*array.BooleanBuilder](b):
		return fixed(1, func(b array.Builder, raw []byte) error {
			b.(*array.BooleanBuilder).Append(raw[0] != 0)
			return nil
		})
	case oid == pgtype.ByteaOID && is[*array.BinaryBuilder](b):
		return func(b array.Builder, raw []byte) error {
			b.(*array.BinaryBuilder).Append(raw)
			return nil
		}
	case oid == pgtype.DateOID && is[*array.Date32Builder](b):
		return fixed(4, func(b array.Builder, raw []byte) error {
			d := int32(be.Uint32(raw))
			if d == math.MaxInt32 || d == math.MinInt32 {
				return fmt.Errorf("date %s is not a date", infinity(d > 0))
			}
			b.(*array.Date32Builder).Append(arrow.Date32(d + pgEpochDays))
			return nil
		})
	case (oid == pgtype.TimestampOID || oid == pgtype.TimestamptzOID) && is[*array.TimestampBuilder](b):
		return fixed(8, func(b array.Builder, raw []byte) error {
			us := int64(be.Uint64(raw))
			if us == math.MaxInt64 || us == math.MinInt64 {
				return fmt.Errorf("timestamp %s is not a timestamp", infinity(us > 0))
			}
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(us + pgEpochMicros))
			return nil
		})
	case oid == pgtype.UUIDOID && is[*extensions.UUIDBuilder](b):
		return fixed(16, func(b array.Builder, raw []byte) error {
			b.(*extensions.UUIDBuilder).AppendBytes([16]byte(raw))
			return nil
		})
	}
	return nil
}

func is[T array.Builder](b array.Builder) bool {
	_, ok := b.(T)
	return ok
}

func infinity(pos bool) string {
	if pos {
		return "infinity"
	}
	return "-infinity"
}
