package load

import (
	"fmt"
	"regexp"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/jackc/pgx/v5/pgtype"
)

// Types is the type table: the PostgreSQL type of a column of each Arrow type a manifest
// names (as export writes them). A decimal(p, s) is numeric(p, s). Every other type is
// refused by name.
var Types = map[string]string{
	"bool":                  "boolean",
	"int16":                 "smallint",
	"int32":                 "integer",
	"int64":                 "bigint",
	"float32":               "real",
	"float64":               "double precision",
	"utf8":                  "text",
	"binary":                "bytea",
	"date32":                "date",
	"timestamp[us]":         "timestamp without time zone",
	"timestamp[us, tz=UTC]": "timestamp with time zone",
	"extension<arrow.uuid>": "uuid",
	jsonType:                "jsonb",
}

// jsonType is the manifest's name of a JSON column's type.
const jsonType = "extension<arrow.json[storage_type=utf8]>"

var decimalPattern = regexp.MustCompile(`^decimal\((\d+), (\d+)\)$`)

// pgTypeOf is the PostgreSQL type of a column of Arrow type t (as the manifest names it), as
// format_type() writes it.
func pgTypeOf(t string) (string, bool) {
	if m := decimalPattern.FindStringSubmatch(t); m != nil {
		return "numeric(" + m[1] + "," + m[2] + ")", true
	}
	pg, ok := Types[t]
	return pg, ok
}

// valueFunc returns the value of row i of a column, as pgx encodes it for the column's
// PostgreSQL type; nil is NULL.
type valueFunc func(i int) any

// valuesOf returns the valueFunc of column a, whose manifest type is want.
func valuesOf(a arrow.Array, want string) (valueFunc, error) {
	null := a.IsNull
	if c, ok := a.(*array.Binary); ok && want == jsonType {
		// arrow-go decodes a Parquet JSON column as its bytes
		return func(i int) any { return orNil(null(i), string(c.Value(i))) }, nil
	}
	if got := a.DataType().String(); got != want {
		return nil, fmt.Errorf("the part's column is %s, the manifest's %s", got, want)
	}
	switch c := a.(type) {
	case *array.Boolean:
		return func(i int) any { return orNil(null(i), c.Value(i)) }, nil
	case *array.Int16:
		return func(i int) any { return orNil(null(i), c.Value(i)) }, nil
	case *array.Int32:
		return func(i int) any { return orNil(null(i), c.Value(i)) }, nil
	case *array.Int64:
		return func(i int) any { return orNil(null(i), c.Value(i)) }, nil
	case *array.Float32:
		return func(i int) any { return orNil(null(i), c.Value(i)) }, nil
	case *array.Float64:
		return func(i int) any { return orNil(null(i), c.Value(i)) }, nil
	case *array.String:
		return func(i int) any { return orNil(null(i), c.Value(i)) }, nil
	case *array.Binary:
		return func(i int) any { return orNil(null(i), c.Value(i)) }, nil
	case *array.Decimal128:
		exp := -c.DataType().(*arrow.Decimal128Type).Scale
		return func(i int) any {
			if null(i) {
				return nil
			}
			return pgtype.Numeric{Int: c.Value(i).BigInt(), Exp: exp, Valid: true}
		}, nil
	case *array.Date32:
		return func(i int) any {
			if null(i) {
				return nil
			}
			return pgtype.Date{Time: time.Unix(int64(c.Value(i))*86400, 0).UTC(), Valid: true}
		}, nil
	case *array.Timestamp:
		tt := c.DataType().(*arrow.TimestampType)
		if tt.Unit != arrow.Microsecond {
			break
		}
		if tt.TimeZone == "" {
			return func(i int) any {
				if null(i) {
					return nil
				}
				return pgtype.Timestamp{Time: time.UnixMicro(int64(c.Value(i))).UTC(), Valid: true}
			}, nil
		}
		return func(i int) any {
			if null(i) {
				return nil
			}
			return pgtype.Timestamptz{Time: time.UnixMicro(int64(c.Value(i))).UTC(), Valid: true}
		}, nil
	case *extensions.UUIDArray:
		s := c.Storage().(*array.FixedSizeBinary)
		return func(i int) any {
			if null(i) {
				return nil
			}
			return pgtype.UUID{Bytes: [16]byte(s.Value(i)), Valid: true}
		}, nil
	case *extensions.JSONArray:
		s, ok := c.Storage().(*array.String)
		if !ok {
			break
		}
		return func(i int) any { return orNil(null(i), s.Value(i)) }, nil
	}
	return nil, fmt.Errorf("type %s: load does not take it", want)
}

func orNil[T any](null bool, v T) any {
	if null {
		return nil
	}
	return v
}
