package export

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
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
	pgtype.UUIDOID: pgx.BinaryFormatCode, moneyOID: pgx.BinaryFormatCode,
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
		return s.inPgSnapshot(ctx, pc.Conn(), e, func() error {
			var rerr error
			total, rerr = s.readPgx(ctx, pc.Conn(), e, cols, r, w, batchRows, emit)
			return rerr
		})
	})
	return total, err
}

func (s *source) readPgx(ctx context.Context, pc *pgx.Conn, e *Export, cols []Column, r Range, w window, batchRows int,
	emit func(arrow.RecordBatch) error) (int64, error) {
	q, args := s.query(e, cols, r, w)
	rows, err := pc.Query(ctx, q, append([]any{pgBinaryOIDs}, args...)...)
	if err != nil {
		return 0, s.readErr(ctx, e, cols, r, w, err)
	}
	defer rows.Close()
	b := array.NewRecordBuilder(arrowMem, schemaOf(cols))
	defer b.Release()
	fds := rows.FieldDescriptions()
	if len(fds) != len(cols) {
		rows.Close()
		if err := rows.Err(); err != nil { // pgx reports a failed query here (a lock timeout)
			return 0, s.readErr(ctx, e, cols, r, w, err)
		}
		return 0, newErr("read", s.what(e), ErrSourceRead, fmt.Errorf("query returned %d columns, want %d", len(fds), len(cols)))
	}
	decs := make([]pgDecoder, len(cols))
	for i := range cols {
		decs[i] = s.pgDecoderFor(pc.TypeMap(), fds[i], b.Field(i), cols[i], e.rules())
	}
	key := keyIndex(cols, e)
	reserve := func() {
		for _, f := range b.Fields() {
			f.Reserve(batchRows) // one allocation per batch, instead of regrowing by doubling
		}
	}
	reserve()
	var total int64
	n, size := 0, 0
	for rows.Next() {
		for i, raw := range rows.RawValues() {
			if raw == nil {
				b.Field(i).AppendNull()
				continue
			}
			if err := decs[i](b.Field(i), raw); err != nil {
				return total, s.valueErr(e, cols[i], pgRowKey(fds, rows.RawValues(), key), pgValueText(fds[i], raw), err)
			}
			size += len(raw)
		}
		total++
		if n++; n >= batchRows || size >= maxBatchBytes {
			if err := emitBatch(b, emit); err != nil {
				return total, err
			}
			n, size = 0, 0
			reserve()
		}
	}
	if err := rows.Err(); err != nil {
		rows.Close() // free the connection for the search below
		return total, s.readErr(ctx, e, cols, r, w, err)
	}
	if n > 0 || total == 0 {
		return total, emitBatch(b, emit)
	}
	return total, nil
}

// readErr classifies a failed read; when PostgreSQL refused to send text that is not UTF-8
// (a SQL_ASCII database's), it finds and names the value instead.
func (s *source) readErr(ctx context.Context, e *Export, cols []Column, r Range, w window, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "22021" && s.pg != nil && s.pg.checkUTF8 {
		return s.locateNotUTF8(ctx, e, cols, r, w, s.d.classify(err, s.what(e)))
	}
	return s.d.classify(err, s.what(e))
}

func emitBatch(b *array.RecordBuilder, emit func(arrow.RecordBatch) error) error {
	rec := b.NewRecordBatch()
	defer rec.Release()
	return emit(rec)
}

// pgDecoderFor picks the decoder of a column from its wire type and format and its builder.
func (s *source) pgDecoderFor(m *pgtype.Map, fd pgconn.FieldDescription, b array.Builder, c Column, r valueRules) pgDecoder {
	if fd.Format == pgx.TextFormatCode {
		return s.textDecoder(b, c, r)
	}
	if d := binaryDecoder(fd.DataTypeOID, b, r); d != nil {
		return d
	}
	conv := c.converter(r)
	return func(b array.Builder, raw []byte) error { // a binary type with an unexpected builder
		t, ok := m.TypeForOID(fd.DataTypeOID)
		if !ok {
			return fmt.Errorf("no decoder for type oid %d", fd.DataTypeOID)
		}
		v, err := t.Codec.DecodeValue(m, fd.DataTypeOID, fd.Format, raw)
		if err != nil {
			return err
		}
		return conv(b, v)
	}
}

// textDecoder appends a value in PostgreSQL's text form. Text is checked to be UTF-8 only
// when the database is SQL_ASCII (it stores any bytes); any other encoding is converted to
// UTF-8 by the server (client_encoding is pinned to UTF8).
func (s *source) textDecoder(b array.Builder, c Column, r valueRules) pgDecoder {
	check := s.pg != nil && s.pg.checkUTF8
	switch b.(type) {
	case *array.StringBuilder:
		return func(b array.Builder, raw []byte) error {
			if check && !utf8.Valid(raw) {
				return refuse(ErrNotUTF8, "the database's encoding is SQL_ASCII")
			}
			b.(*array.StringBuilder).BinaryBuilder.Append(raw)
			return nil
		}
	case *array.Decimal128Builder:
		return func(b array.Builder, raw []byte) error { return appendDecimalText(b.(*array.Decimal128Builder), raw) }
	case *array.ExtensionBuilder: // JSON
		return func(b array.Builder, raw []byte) error {
			if check && !utf8.Valid(raw) {
				return refuse(ErrNotUTF8, "the database's encoding is SQL_ASCII")
			}
			b.(*array.ExtensionBuilder).Builder.(*array.StringBuilder).BinaryBuilder.Append(raw)
			return nil
		}
	}
	conv := c.converter(r)
	return func(b array.Builder, raw []byte) error { return conv(b, string(raw)) }
}

var errBinaryLength = errors.New("unexpected binary value length")

// binaryDecoder returns the decoder of a binary-format oid into b, or nil if there is none.
func binaryDecoder(oid uint32, b array.Builder, r valueRules) pgDecoder {
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
	return binaryDecoder2(oid, b, r, fixed)
}

func binaryDecoder2(oid uint32, b array.Builder, r valueRules, fixed func(int, func(array.Builder, []byte) error) pgDecoder) pgDecoder {
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
				return infinite(b, d > 0, r.infinity)
			}
			b.(*array.Date32Builder).Append(arrow.Date32(d + pgEpochDays)) // PostgreSQL's dates end in 5874897: no overflow
			return nil
		})
	case (oid == pgtype.TimestampOID || oid == pgtype.TimestamptzOID) && is[*array.TimestampBuilder](b):
		return fixed(8, func(b array.Builder, raw []byte) error {
			us := int64(be.Uint64(raw))
			switch {
			case us == math.MaxInt64 || us == math.MinInt64:
				return infinite(b, us > 0, r.infinity)
			case us >= maxTimestamp-pgEpochMicros:
				// PostgreSQL's timestamps go on to 294276; Unix microseconds end in 294247 (and
				// their largest value is read as infinity).
				return refuse(ErrOutOfRange, "past 294247-01-10 04:00:54.775806, the last microsecond timestamp a reader takes")
			}
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(us + pgEpochMicros))
			return nil
		})
	case oid == moneyOID && is[*array.Decimal128Builder](b):
		return fixed(8, func(b array.Builder, raw []byte) error { // in the smallest unit: the scale's
			b.(*array.Decimal128Builder).Append(decimal128.FromI64(int64(be.Uint64(raw))))
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

// pgRowKey is the chunking key of the row being read, for a message.
func pgRowKey(fds []pgconn.FieldDescription, raws [][]byte, key int) string {
	if key < 0 || key >= len(raws) {
		return "?"
	}
	return pgValueText(fds[key], raws[key])
}

// pgValueText is a raw value for a message: text as text, the binary integers, dates and
// timestamps as PostgreSQL writes them (whatever their year), anything else in hex.
func pgValueText(fd pgconn.FieldDescription, raw []byte) string {
	be := binary.BigEndian
	switch {
	case raw == nil:
		return "NULL"
	case fd.Format == pgx.TextFormatCode:
		return describeValue(string(raw))
	case len(raw) == 2 && fd.DataTypeOID == pgtype.Int2OID:
		return strconv.Itoa(int(int16(be.Uint16(raw))))
	case len(raw) == 4 && fd.DataTypeOID == pgtype.Int4OID:
		return strconv.Itoa(int(int32(be.Uint32(raw))))
	case len(raw) == 8 && fd.DataTypeOID == pgtype.Int8OID:
		return strconv.FormatInt(int64(be.Uint64(raw)), 10)
	case len(raw) == 4 && fd.DataTypeOID == pgtype.DateOID:
		switch d := int32(be.Uint32(raw)); d {
		case math.MaxInt32:
			return "infinity"
		case math.MinInt32:
			return "-infinity"
		default:
			return time.Date(2000, 1, 1+int(d), 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		}
	case len(raw) == 8 && (fd.DataTypeOID == pgtype.TimestampOID || fd.DataTypeOID == pgtype.TimestamptzOID):
		switch us := int64(be.Uint64(raw)); us {
		case math.MaxInt64:
			return "infinity"
		case math.MinInt64:
			return "-infinity"
		default:
			days, rem := floorDiv(us, microsPerDay), us-floorDiv(us, microsPerDay)*microsPerDay
			return time.Date(2000, 1, 1+int(days), 0, 0, 0, int(rem)*1000, time.UTC).Format("2006-01-02 15:04:05.999999")
		}
	}
	return describeValue(raw)
}
