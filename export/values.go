package export

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/google/uuid"
)

// convFunc appends one non-NULL source value, as the database/sql driver returned it, to its
// column's builder, exactly, or returns a *refusal saying why it cannot. SQLite hands over its
// storage classes (int64, float64, string, []byte; the columns are selected without their
// declared types, so that the driver parses nothing); PostgreSQL through database/sql hands
// over typed values (bool, time.Time…), which the same functions take.
type convFunc func(b array.Builder, v any) error

// valueRules are the export's options that decide what a value may become.
type valueRules struct {
	infinity InfinityPolicy
}

// converter returns the convFunc of c.
func (c *Column) converter(r valueRules) convFunc {
	switch t := c.Type.(type) {
	case *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type:
		return convInt
	case *arrow.Float32Type, *arrow.Float64Type:
		return convFloat
	case *arrow.BooleanType:
		return convBool
	case *arrow.BinaryType:
		return convBinary
	case *arrow.StringType:
		if c.decimalText {
			return convDecimalText
		}
		return convString
	case *arrow.Decimal128Type:
		return convDecimal(t.Precision, t.Scale)
	case *arrow.Date32Type:
		return convDate(c.unit, r.infinity)
	case *arrow.TimestampType:
		return convTimestamp(c.unit, t.TimeZone != "", r.infinity)
	case *extensions.UUIDType:
		return convUUID
	case arrow.ExtensionType: // JSON, with string storage
		return convJSON
	}
	return func(b array.Builder, v any) error { return fmt.Errorf("no conversion to %s", b.Type()) }
}

func wrongType(v any, want string) error {
	return refuse(ErrWrongType, "a %s is not %s", storageName(v), want)
}

// storageName names a driver value's kind as SQLite names its storage classes.
func storageName(v any) string {
	switch v.(type) {
	case int64, int32, int16, int:
		return "INTEGER"
	case float64, float32:
		return "REAL"
	case string:
		return "TEXT"
	case []byte:
		return "BLOB"
	case bool:
		return "boolean"
	case time.Time:
		return "timestamp"
	}
	return fmt.Sprintf("%T", v)
}

func convInt(b array.Builder, v any) error {
	n, err := intValue(v)
	if err != nil {
		return err
	}
	switch b := b.(type) {
	case *array.Int64Builder:
		b.Append(n)
	case *array.Int32Builder:
		if n != int64(int32(n)) {
			return refuse(ErrOutOfRange, "does not fit a 32-bit integer")
		}
		b.Append(int32(n))
	case *array.Int16Builder:
		if n != int64(int16(n)) {
			return refuse(ErrOutOfRange, "does not fit a 16-bit integer")
		}
		b.Append(int16(n))
	}
	return nil
}

func convFloat(b array.Builder, v any) error {
	f, err := floatValue(v)
	if err != nil {
		return err
	}
	switch b := b.(type) {
	case *array.Float64Builder:
		b.Append(f)
	case *array.Float32Builder:
		if float64(float32(f)) != f && !math.IsNaN(f) {
			return refuse(ErrInexact, "no single-precision float equals it")
		}
		b.Append(float32(f))
	}
	return nil
}

// intValue is v, as the driver returned it, as the integer export writes of it.
func intValue(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int:
		return int64(x), nil
	case float64: // SQLite keeps a REAL in an INTEGER column only when no integer equals it
		if x != math.Trunc(x) || x < -(1<<63) || x >= 1<<63 {
			return 0, refuse(ErrInexact, "a REAL that is not a 64-bit integer")
		}
		return int64(x), nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, refuse(ErrWrongType, "TEXT that is not a 64-bit integer")
		}
		return n, nil
	}
	return 0, wrongType(v, "an integer")
}

// floatValue is v, as the driver returned it, as the float export writes of it.
func floatValue(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case int64:
		if f := float64(x); f < 1<<63 && int64(f) == x {
			return f, nil
		}
		return 0, refuse(ErrInexact, "an INTEGER that no double equals")
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, refuse(ErrWrongType, "TEXT that is not a number")
		}
		return f, nil
	}
	return 0, wrongType(v, "a number")
}

// convBool takes 0 and 1 (SQLite's booleans) and the text true, false, 1, 0 in any case;
// anything else (2, -1, 'yes') is refused rather than read as true.
func convBool(b array.Builder, v any) error {
	var t bool
	switch x := v.(type) {
	case bool:
		t = x
	case int64:
		if x != 0 && x != 1 {
			return refuse(ErrWrongType, "a boolean is 0 or 1")
		}
		t = x == 1
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "1", "true":
			t = true
		case "0", "false":
		default:
			return refuse(ErrWrongType, "a boolean is 0, 1, true or false")
		}
	default:
		return wrongType(v, "a boolean")
	}
	b.(*array.BooleanBuilder).Append(t)
	return nil
}

func convBinary(b array.Builder, v any) error {
	switch x := v.(type) {
	case []byte:
		b.(*array.BinaryBuilder).Append(x)
	case string:
		b.(*array.BinaryBuilder).AppendString(x)
	default:
		return wrongType(v, "bytes")
	}
	return nil
}

// convString takes text that is valid UTF-8 (a BLOB too, when its bytes are), and numbers
// as their exact text; text that is not UTF-8 is refused (Export.InvalidUTF8 decides, before
// the run's first part, whether such a column is written as binary instead).
func convString(b array.Builder, v any) error {
	sb := b.(*array.StringBuilder)
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return refuse(ErrNotUTF8, "")
		}
		sb.Append(x)
	case []byte:
		if !utf8.Valid(x) {
			return refuse(ErrNotUTF8, "a BLOB in a text column")
		}
		sb.BinaryBuilder.Append(x)
	case int64:
		sb.Append(strconv.FormatInt(x, 10))
	case float64:
		sb.Append(floatText(x))
	case bool:
		sb.Append(strconv.FormatBool(x))
	case time.Time:
		sb.Append(x.Format(time.RFC3339Nano))
	default:
		sb.Append(fmt.Sprint(x))
	}
	return nil
}

// exactDecimal is v as an exact decimal: an integer, the shortest decimal of a REAL, or text
// in decimal notation.
func exactDecimal(v any) (decimalText, error) {
	var d decimalText
	var ok bool
	switch x := v.(type) {
	case int64:
		d, _ = parseDecimal(strconv.FormatInt(x, 10)) // digits always parse
	case float64:
		if d, ok = floatDecimal(x); !ok {
			return d, refuse(ErrOutOfRange, "%v is not a decimal number", x)
		}
	case string:
		if d, ok = parseDecimal(strings.TrimSpace(x)); !ok {
			return d, refuse(ErrWrongType, "TEXT that is not a decimal number")
		}
	default:
		return d, wrongType(v, "a decimal number")
	}
	return d, nil
}

// convDecimal writes a decimal(precision, scale) only when the value is exactly one: a value
// with more fraction digits than the scale or more integer digits than precision-scale is
// refused, never rounded.
func convDecimal(precision, scale int32) convFunc {
	return func(b array.Builder, v any) error {
		d, err := exactDecimal(v)
		if err != nil {
			return err
		}
		if !d.fits(precision, scale) {
			return refuse(ErrInexact, "%s is not a decimal(%d,%d): %s", d, precision, scale, misfit(d, precision, scale))
		}
		n, err := d.decimal128(scale)
		if err != nil {
			return refuse(ErrInexact, "%s: %v", d, err)
		}
		b.(*array.Decimal128Builder).Append(n)
		return nil
	}
}

func misfit(d decimalText, precision, scale int32) string {
	if d.scale > int(scale) {
		return fmt.Sprintf("%d digits after the point, the column keeps %d", d.scale, scale)
	}
	return fmt.Sprintf("%d digits before the point, the column keeps %d", d.intDigits(), precision-scale)
}

// convDecimalText writes a decimal's exact text: the text itself when it is a decimal, an
// integer's digits, a REAL's shortest decimal.
func convDecimalText(b array.Builder, v any) error {
	sb := b.(*array.StringBuilder)
	switch x := v.(type) {
	case string:
		if _, ok := parseDecimal(strings.TrimSpace(x)); !ok {
			switch strings.TrimSpace(x) {
			case "NaN", "Infinity", "-Infinity": // PostgreSQL's numeric has them
			default:
				return refuse(ErrWrongType, "TEXT that is not a decimal number")
			}
		}
		sb.Append(strings.TrimSpace(x))
		return nil
	case float64:
		if d, ok := floatDecimal(x); ok {
			sb.Append(d.String())
			return nil
		}
		sb.Append(floatText(x))
		return nil
	}
	d, err := exactDecimal(v)
	if err != nil {
		return err
	}
	sb.Append(d.String())
	return nil
}

func convJSON(b array.Builder, v any) error {
	sb := b.(*array.ExtensionBuilder).Builder.(*array.StringBuilder)
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return refuse(ErrNotUTF8, "")
		}
		if !json.Valid([]byte(x)) {
			return refuse(ErrBadValue, "not JSON")
		}
		sb.Append(x)
	case []byte:
		if !utf8.Valid(x) || !json.Valid(x) {
			return refuse(ErrBadValue, "a BLOB that is not JSON text (SQLite's binary JSONB: select json(column) in a query)")
		}
		sb.BinaryBuilder.Append(x)
	case int64:
		sb.Append(strconv.FormatInt(x, 10))
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return refuse(ErrBadValue, "%v is not a JSON number", x)
		}
		sb.Append(strconv.FormatFloat(x, 'g', -1, 64))
	default:
		return wrongType(v, "JSON")
	}
	return nil
}

func convUUID(b array.Builder, v any) error {
	ub := b.(*extensions.UUIDBuilder)
	switch x := v.(type) {
	case [16]byte:
		ub.AppendBytes(x)
		return nil
	case []byte:
		if len(x) == 16 {
			ub.AppendBytes([16]byte(x))
			return nil
		}
		v = string(x)
	}
	s, ok := v.(string)
	if !ok {
		return wrongType(v, "a UUID")
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return refuse(ErrWrongType, "not a UUID")
	}
	ub.Append(u)
	return nil
}

// The range of Arrow's date32 and microsecond timestamps, and what Export.Infinity clamp
// writes for ±infinity: the type's largest and smallest values (DuckDB reads them back as
// infinity and -infinity).
const (
	maxTimestamp = math.MaxInt64
	minTimestamp = -math.MaxInt64
	maxDate32    = math.MaxInt32
	minDate32    = -math.MaxInt32
)

// infinite applies the infinity policy to ±infinity in a date or timestamp column: it
// appends NULL or the clamped value, or refuses.
func infinite(b array.Builder, pos bool, p InfinityPolicy) error {
	switch p {
	case InfinityNull:
		b.AppendNull()
	case InfinityClamp:
		switch b := b.(type) {
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(pick(pos, int64(maxTimestamp), minTimestamp)))
		case *array.Date32Builder:
			b.Append(arrow.Date32(pick(pos, int32(maxDate32), minDate32)))
		}
	default:
		return refuse(ErrInfinite, "")
	}
	return nil
}

func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

func infinityText(v any) (pos, ok bool) {
	s, isStr := v.(string)
	switch {
	case !isStr:
		return false, false
	case s == "infinity":
		return true, true
	case s == "-infinity":
		return false, true
	}
	return false, false
}

// convDate takes YYYY-MM-DD (a time of exactly midnight is allowed), or a number in the
// column's stated unit that falls on a midnight; a time of day is never dropped.
func convDate(unit TimeUnit, inf InfinityPolicy) convFunc {
	return func(b array.Builder, v any) error {
		if pos, ok := infinityText(v); ok {
			return infinite(b, pos, inf)
		}
		var us int64
		switch x := v.(type) {
		case time.Time:
			y, m, d := x.Date()
			if x.Hour() != 0 || x.Minute() != 0 || x.Second() != 0 || x.Nanosecond() != 0 {
				return refuse(ErrInexact, "has a time of day, the column holds dates")
			}
			us = time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() * 1_000_000
		case string:
			t, err := parseISO(x)
			if err != nil {
				return err
			}
			if t.hasZone && t.offset != 0 {
				return refuse(ErrBadTime, "a zone offset in a date column")
			}
			us = t.micros
		default:
			var err error
			if us, err = numberMicros(v, unit); err != nil {
				return err
			}
		}
		if us%microsPerDay != 0 {
			return refuse(ErrInexact, "%s has a time of day, the column holds dates", formatMicros(us))
		}
		days := floorDiv(us, microsPerDay)
		if days > maxDate32 || days < minDate32 {
			return refuse(ErrOutOfRange, "beyond a date32")
		}
		b.(*array.Date32Builder).Append(arrow.Date32(days))
		return nil
	}
}

// convTimestamp takes ISO-8601 text or a number in the column's stated unit. A column with
// a time zone (TIMESTAMPTZ) needs the zone in the text and keeps the instant, in UTC; a
// column without one takes text without an offset (or Z, +00:00), since moving a wall clock
// by an offset is a guess about what the column means. Digits finer than a microsecond must
// be zeros.
func convTimestamp(unit TimeUnit, zoned bool, inf InfinityPolicy) convFunc {
	return func(b array.Builder, v any) error {
		if pos, ok := infinityText(v); ok {
			return infinite(b, pos, inf)
		}
		var us int64
		switch x := v.(type) {
		case time.Time: // PostgreSQL through database/sql
			if x.Nanosecond()%1000 != 0 {
				return refuse(ErrInexact, "finer than a microsecond")
			}
			if sec := x.Unix(); sec > math.MaxInt64/1_000_000-1 || sec < math.MinInt64/1_000_000+1 {
				return refuse(ErrOutOfRange, "beyond a microsecond timestamp (years -290308 to 294247)")
			}
			us = x.UnixMicro()
		case string:
			t, err := parseISO(x)
			switch {
			case err != nil:
				return err
			case t.subUS:
				return refuse(ErrInexact, "digits finer than a microsecond")
			case zoned && !t.hasZone && t.hasTime:
				return refuse(ErrBadTime, "no zone offset in a column with a time zone")
			case !zoned && t.hasZone && t.offset != 0:
				return refuse(ErrBadTime, "a zone offset in a column without a time zone (select datetime(column) in a query to convert it to UTC)")
			}
			us = t.micros - int64(t.offset)*1_000_000
		default:
			var err error
			if us, err = numberMicros(v, unit); err != nil {
				return err
			}
		}
		if us >= maxTimestamp || us <= minTimestamp {
			return refuse(ErrOutOfRange, "%s is beyond the microsecond timestamps (its extremes read as infinity)", formatMicros(us))
		}
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(us))
		return nil
	}
}

// numberMicros is an INTEGER or REAL in unit as microseconds since the epoch.
func numberMicros(v any, unit TimeUnit) (int64, error) {
	switch x := v.(type) {
	case int64:
		if unit == "" {
			return 0, refuse(ErrNoTimeUnit, "")
		}
		return unitMicros(x, unit)
	case float64:
		if unit == "" {
			return 0, refuse(ErrNoTimeUnit, "")
		}
		return unitMicrosFloat(x, unit)
	}
	return 0, wrongType(v, "a date or timestamp")
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// describeValue is v for a message: text quoted (and shortened), bytes that are not UTF-8 as
// a hex literal, numbers as they are.
func describeValue(v any) string {
	const maxShown = 64
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		if !utf8.ValidString(x) {
			return hexLiteral([]byte(x), maxShown)
		}
		if len(x) > maxShown {
			return strconv.Quote(x[:maxShown]) + "…"
		}
		return strconv.Quote(x)
	case []byte:
		return hexLiteral(x, maxShown)
	case float64:
		return floatText(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

func hexLiteral(b []byte, maxShown int) string {
	if len(b) > maxShown/2 {
		return "x'" + hex.EncodeToString(b[:maxShown/2]) + "'…"
	}
	return "x'" + hex.EncodeToString(b) + "'"
}
