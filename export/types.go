package export

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/google/uuid"
)

// Column is one column of the exported rows: its name, the source's type name, and the Arrow
// type it is written as.
type Column struct {
	Name   string
	DBType string
	Type   arrow.DataType
}

// keyKind says whether a column can chunk the rows.
type keyKind int

const (
	keyNone keyKind = iota
	keyInt
	keyTime
)

func keyKindOf(t arrow.DataType) keyKind {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return keyInt
	case arrow.TIMESTAMP, arrow.DATE32:
		return keyTime
	}
	return keyNone
}

var (
	jsonType = func() arrow.DataType {
		t, err := extensions.NewJSONType(arrow.BinaryTypes.String)
		if err != nil {
			panic(err)
		}
		return t
	}()
	uuidType  = extensions.NewUUIDType()
	tsNaive   = &arrow.TimestampType{Unit: arrow.Microsecond}
	tsUTC     = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	precScale = regexp.MustCompile(`\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)`)
)

// pgType maps a PostgreSQL type name (as pgx names it, upper case) to Arrow. Unknown types are
// written as their text form.
func pgType(name string, prec, scale int64, hasDec bool) arrow.DataType {
	switch strings.ToUpper(name) {
	case "INT2":
		return arrow.PrimitiveTypes.Int16
	case "INT4":
		return arrow.PrimitiveTypes.Int32
	case "INT8", "OID":
		return arrow.PrimitiveTypes.Int64
	case "FLOAT4":
		return arrow.PrimitiveTypes.Float32
	case "FLOAT8":
		return arrow.PrimitiveTypes.Float64
	case "NUMERIC":
		if hasDec && prec > 0 && prec <= 38 {
			return &arrow.Decimal128Type{Precision: int32(prec), Scale: int32(scale)}
		}
		return arrow.BinaryTypes.String // unconstrained numeric: exact text
	case "BOOL":
		return arrow.FixedWidthTypes.Boolean
	case "BYTEA":
		return arrow.BinaryTypes.Binary
	case "DATE":
		return arrow.FixedWidthTypes.Date32
	case "TIMESTAMP":
		return tsNaive
	case "TIMESTAMPTZ":
		return tsUTC
	case "UUID":
		return uuidType
	case "JSON", "JSONB":
		return jsonType
	}
	return arrow.BinaryTypes.String
}

// sqliteType maps a SQLite declared type to Arrow, following SQLite's affinity rules, with the
// common names for booleans, dates, timestamps, decimals, UUIDs and JSON recognised first.
func sqliteType(decl string) arrow.DataType {
	d := strings.ToUpper(strings.TrimSpace(decl))
	base, _, _ := strings.Cut(d, "(")
	base = strings.TrimSpace(base)
	switch {
	case base == "BOOL" || base == "BOOLEAN":
		return arrow.FixedWidthTypes.Boolean
	case base == "DATE":
		return arrow.FixedWidthTypes.Date32
	case base == "DATETIME" || strings.HasPrefix(base, "TIMESTAMP"):
		return tsNaive
	case base == "UUID":
		return uuidType
	case base == "JSON" || base == "JSONB":
		return jsonType
	case base == "DECIMAL" || base == "NUMERIC":
		if m := precScale.FindStringSubmatch(d); m != nil {
			p, _ := strconv.Atoi(m[1])
			s, _ := strconv.Atoi(m[2])
			if p > 0 && p <= 38 && s <= p {
				return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}
			}
		}
		return arrow.PrimitiveTypes.Float64
	case strings.Contains(d, "INT"):
		return arrow.PrimitiveTypes.Int64
	case strings.Contains(d, "CHAR") || strings.Contains(d, "CLOB") || strings.Contains(d, "TEXT"):
		return arrow.BinaryTypes.String
	case strings.Contains(d, "BLOB"):
		return arrow.BinaryTypes.Binary
	case strings.Contains(d, "REAL") || strings.Contains(d, "FLOA") || strings.Contains(d, "DOUB"):
		return arrow.PrimitiveTypes.Float64
	}
	return arrow.BinaryTypes.String // no declared type (an expression): its text form
}

// appendValue appends v, as the driver returned it, to b. nil appends a NULL.
func appendValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch b := b.(type) {
	case *array.Int16Builder:
		n, err := toInt(v)
		b.Append(int16(n))
		return err
	case *array.Int32Builder:
		n, err := toInt(v)
		b.Append(int32(n))
		return err
	case *array.Int64Builder:
		n, err := toInt(v)
		b.Append(n)
		return err
	case *array.Float32Builder:
		f, err := toFloat(v)
		b.Append(float32(f))
		return err
	case *array.Float64Builder:
		f, err := toFloat(v)
		b.Append(f)
		return err
	case *array.BooleanBuilder:
		n, err := toBool(v)
		b.Append(n)
		return err
	case *array.BinaryBuilder:
		return appendBytes(b, v)
	case *array.StringBuilder:
		b.Append(toText(v))
		return nil
	}
	return appendTyped(b, v)
}

func appendTyped(b array.Builder, v any) error {
	switch b := b.(type) {
	case *array.Date32Builder:
		t, err := toTime(v)
		b.Append(arrow.Date32FromTime(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)))
		return err
	case *array.TimestampBuilder:
		t, err := toTime(v)
		b.Append(arrow.Timestamp(t.UnixMicro()))
		return err
	case *array.Decimal128Builder:
		dt := b.Type().(*arrow.Decimal128Type)
		n, err := decimal128.FromString(toText(v), dt.Precision, dt.Scale)
		if err != nil {
			b.AppendNull()
			return fmt.Errorf("decimal(%d,%d) %q: %w", dt.Precision, dt.Scale, toText(v), err)
		}
		b.Append(n)
		return nil
	case *extensions.UUIDBuilder:
		return appendUUID(b, v)
	case *array.ExtensionBuilder: // JSON: string storage
		b.Builder.(*array.StringBuilder).Append(toText(v))
		return nil
	}
	return fmt.Errorf("no conversion to %s", b.Type())
}

func appendBytes(b *array.BinaryBuilder, v any) error {
	switch x := v.(type) {
	case []byte:
		b.Append(x)
	case string:
		b.AppendString(x)
	default:
		b.AppendNull()
		return fmt.Errorf("%T is not binary", v)
	}
	return nil
}

func appendUUID(b *extensions.UUIDBuilder, v any) error {
	switch x := v.(type) {
	case []byte:
		if len(x) == 16 {
			b.AppendBytes([16]byte(x))
			return nil
		}
		v = string(x)
	case [16]byte:
		b.AppendBytes(x)
		return nil
	}
	u, err := uuid.Parse(toText(v))
	if err != nil {
		b.AppendNull()
		return fmt.Errorf("uuid %q: %w", toText(v), err)
	}
	b.Append(u)
	return nil
}

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case float64:
		if x == float64(int64(x)) {
			return int64(x), nil
		}
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		return strconv.ParseInt(strings.TrimSpace(x), 10, 64)
	case []byte:
		return strconv.ParseInt(strings.TrimSpace(string(x)), 10, 64)
	}
	return 0, fmt.Errorf("%T %v is not an integer", v, v)
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case string:
		return strconv.ParseFloat(strings.TrimSpace(x), 64)
	case []byte:
		return strconv.ParseFloat(strings.TrimSpace(string(x)), 64)
	}
	return 0, fmt.Errorf("%T %v is not a number", v, v)
}

func toBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case int64:
		return x != 0, nil
	case string:
		return strconv.ParseBool(x)
	}
	return false, fmt.Errorf("%T %v is not a boolean", v, v)
}

// timeLayouts are the text forms of timestamps SQLite databases commonly hold.
var timeLayouts = []string{
	time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999", "2006-01-02 15:04", "2006-01-02T15:04", time.DateOnly,
}

func toTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x, nil
	case int64: // unix seconds, as SQLite's unixepoch() stores them
		return time.Unix(x, 0).UTC(), nil
	case float64: // a Julian day number
		return time.UnixMicro(int64((x - 2440587.5) * 86400e6)).UTC(), nil
	case string, []byte:
		s := strings.TrimSpace(toText(x))
		for _, l := range timeLayouts {
			if t, err := time.Parse(l, s); err == nil {
				return t, nil
			}
		}
		return time.Time{}, fmt.Errorf("%q is not a timestamp", s)
	}
	return time.Time{}, fmt.Errorf("%T %v is not a timestamp", v, v)
}

func toText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case *big.Rat:
		return x.FloatString(20)
	case fmt.Stringer:
		return x.String()
	case map[string]any, []any:
		b, _ := json.Marshal(x)
		return string(b)
	}
	return fmt.Sprint(v)
}
