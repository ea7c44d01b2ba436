package export

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"
)

// Column is one column of the exported rows: its name, the source's type name, and the Arrow
// type it is written as.
type Column struct {
	Name   string
	DBType string // the source's type: SQLite's declared type, PostgreSQL's format_type()
	Type   arrow.DataType

	decimalText bool     // a utf8 column holding a decimal's exact text
	unit        TimeUnit // SQLite: the unit of numbers in this date or timestamp column
	oid         uint32   // PostgreSQL: the type on the wire
	money       bool     // PostgreSQL money: read as its integer of the smallest unit
	rawBytes    bool     // PostgreSQL SQL_ASCII text written as binary: read as its bytes
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

// sqliteType maps a SQLite declared type to Arrow, following SQLite's affinity rules, with the
// common names for booleans, dates, timestamps, decimals, UUIDs and JSON recognised first.
// decimalText is set for a DECIMAL or NUMERIC without a precision, or wider than 38 digits:
// such a column is the exact text of its decimals.
func sqliteType(decl string) (t arrow.DataType, decimalText bool) {
	d := strings.ToUpper(strings.TrimSpace(decl))
	base, _, _ := strings.Cut(d, "(")
	base = strings.Join(strings.Fields(base), " ")
	switch {
	case base == "BOOL" || base == "BOOLEAN":
		return arrow.FixedWidthTypes.Boolean, false
	case base == "DATE":
		return arrow.FixedWidthTypes.Date32, false
	case base == "TIMESTAMPTZ" || base == "TIMESTAMP WITH TIME ZONE" || strings.HasPrefix(d, "TIMESTAMP") && strings.HasSuffix(d, "WITH TIME ZONE"):
		return tsUTC, false
	case base == "DATETIME" || strings.HasPrefix(base, "TIMESTAMP"):
		return tsNaive, false
	case base == "UUID":
		return uuidType, false
	case base == "JSON" || base == "JSONB":
		return jsonType, false
	case base == "DECIMAL" || base == "NUMERIC":
		if m := precScale.FindStringSubmatch(d); m != nil {
			p, _ := strconv.Atoi(m[1])
			s, _ := strconv.Atoi(m[2])
			if p > 0 && p <= 38 && s <= p {
				return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}, false
			}
		}
		return arrow.BinaryTypes.String, true // exact text, never a float
	case strings.Contains(d, "INT"):
		return arrow.PrimitiveTypes.Int64, false
	case strings.Contains(d, "CHAR") || strings.Contains(d, "CLOB") || strings.Contains(d, "TEXT"):
		return arrow.BinaryTypes.String, false
	case strings.Contains(d, "BLOB"):
		return arrow.BinaryTypes.Binary, false
	case strings.Contains(d, "REAL") || strings.Contains(d, "FLOA") || strings.Contains(d, "DOUB"):
		return arrow.PrimitiveTypes.Float64, false
	}
	return arrow.BinaryTypes.String, false // no declared type (an expression): its text form
}
