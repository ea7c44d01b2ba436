package load

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
)

// The rows go to PostgreSQL in its binary COPY format, encoded here straight from the Arrow
// columns: pgx's CopyFrom encodes each value through its type map, which took 53 % of a
// load's CPU (a numeric alone 29 %, through math/big) and held a load to 0.38 of the
// server's own COPY (bench/load.sh). The encoding of each type is tested against pgx's.

// copyHeader starts a binary COPY stream: the signature, no flags, no header extension.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// copyTrailer ends it.
var copyTrailer = []byte{0xff, 0xff}

// fieldFunc appends the field of row i of a column, as binary COPY writes it: its length (an
// int32, -1 for NULL) and its bytes in the column's PostgreSQL type's binary format.
type fieldFunc func(b []byte, i int) []byte

// The PostgreSQL epoch (2000-01-01) in Unix days and microseconds.
const (
	pgEpochDays   = 10957
	pgEpochMicros = pgEpochDays * 86400 * 1_000_000
)

func appendNull(b []byte) []byte { return append(b, 0xff, 0xff, 0xff, 0xff) }

func appendLen(b []byte, n int) []byte { return binary.BigEndian.AppendUint32(b, uint32(n)) }

// encoderOf returns the fieldFunc of column a, whose manifest type is want.
func encoderOf(a arrow.Array, want string) (fieldFunc, error) {
	null := a.IsNull
	if a.NullN() == 0 {
		null = func(int) bool { return false }
	}
	if c, ok := a.(*array.Binary); ok && want == jsonType { // arrow-go decodes a Parquet JSON column as its bytes
		return jsonb(null, c.Value), nil
	}
	if got := a.DataType().String(); got != want {
		return nil, fmt.Errorf("the part's column is %s, the manifest's %s", got, want)
	}
	switch c := a.(type) {
	case *array.Boolean:
		return func(b []byte, i int) []byte {
			switch {
			case null(i):
				return appendNull(b)
			case c.Value(i):
				return append(appendLen(b, 1), 1)
			}
			return append(appendLen(b, 1), 0)
		}, nil
	case *array.Int16:
		return func(b []byte, i int) []byte {
			if null(i) {
				return appendNull(b)
			}
			return binary.BigEndian.AppendUint16(appendLen(b, 2), uint16(c.Value(i)))
		}, nil
	case *array.Int32:
		return func(b []byte, i int) []byte {
			if null(i) {
				return appendNull(b)
			}
			return binary.BigEndian.AppendUint32(appendLen(b, 4), uint32(c.Value(i)))
		}, nil
	case *array.Int64:
		return func(b []byte, i int) []byte {
			if null(i) {
				return appendNull(b)
			}
			return binary.BigEndian.AppendUint64(appendLen(b, 8), uint64(c.Value(i)))
		}, nil
	case *array.Float32:
		return func(b []byte, i int) []byte {
			if null(i) {
				return appendNull(b)
			}
			return binary.BigEndian.AppendUint32(appendLen(b, 4), math.Float32bits(c.Value(i)))
		}, nil
	case *array.Float64:
		return func(b []byte, i int) []byte {
			if null(i) {
				return appendNull(b)
			}
			return binary.BigEndian.AppendUint64(appendLen(b, 8), math.Float64bits(c.Value(i)))
		}, nil
	case *array.String:
		return func(b []byte, i int) []byte {
			if null(i) {
				return appendNull(b)
			}
			v := c.Value(i)
			return append(appendLen(b, len(v)), v...)
		}, nil
	case *array.Binary:
		return func(b []byte, i int) []byte {
			if null(i) {
				return appendNull(b)
			}
			v := c.Value(i)
			return append(appendLen(b, len(v)), v...)
		}, nil
	case *array.Decimal128:
		scale := c.DataType().(*arrow.Decimal128Type).Scale
		return func(b []byte, i int) []byte {
			if null(i) {
				return appendNull(b)
			}
			return appendNumeric(b, c.Value(i), scale)
		}, nil
	case *array.Date32:
		return func(b []byte, i int) []byte {
			if null(i) {
				return appendNull(b)
			}
			return binary.BigEndian.AppendUint32(appendLen(b, 4), uint32(int32(c.Value(i))-pgEpochDays))
		}, nil
	case *array.Timestamp:
		if c.DataType().(*arrow.TimestampType).Unit != arrow.Microsecond {
			break
		}
		return func(b []byte, i int) []byte {
			if null(i) {
				return appendNull(b)
			}
			return binary.BigEndian.AppendUint64(appendLen(b, 8), uint64(int64(c.Value(i))-pgEpochMicros))
		}, nil
	case *extensions.UUIDArray:
		s := c.Storage().(*array.FixedSizeBinary)
		return func(b []byte, i int) []byte {
			if null(i) {
				return appendNull(b)
			}
			return append(appendLen(b, 16), s.Value(i)...)
		}, nil
	case *extensions.JSONArray:
		if s, ok := c.Storage().(*array.String); ok {
			return jsonb(null, func(i int) []byte { return []byte(s.Value(i)) }), nil
		}
	}
	return nil, fmt.Errorf("type %s: load does not take it", want)
}

// jsonb encodes JSON text as jsonb's binary format: version 1, then the text.
func jsonb(null func(int) bool, value func(int) []byte) fieldFunc {
	return func(b []byte, i int) []byte {
		if null(i) {
			return appendNull(b)
		}
		v := value(i)
		return append(append(appendLen(b, len(v)+1), 1), v...)
	}
}

// appendNumeric appends v × 10^-scale in numeric's binary format: the count of base-10000
// digits, the weight of the first, the sign, the display scale, then the digits. v has at
// most 38 decimal digits (decimal128's precision).
func appendNumeric(b []byte, v decimal128.Num, scale int32) []byte {
	neg := v.Sign() < 0
	if neg {
		v = v.Negate()
	}
	// The 38 decimal digits of v, most significant first: v / 10^19 and v % 10^19 each fit
	// in 64 bits (v < 10^38, so its high 64 bits are below 10^19, as Div64 needs).
	var digits [38]byte
	hi, lo := bits.Div64(uint64(v.HighBits()), v.LowBits(), 1e19)
	for k := 37; k >= 19; k-- {
		digits[k], lo = byte(lo%10), lo/10
	}
	for k := 18; k >= 0; k-- {
		digits[k], hi = byte(hi%10), hi/10
	}
	// Groups of four digits either side of the decimal point, which falls after digit
	// 38-scale: the integer part padded on its left, the fraction on its right.
	point := 38 - int(scale)
	lead := (4 - point%4) % 4
	start := -lead                 // the first digit of the first group (negative: padding)
	end := 38 + (4-(38-point)%4)%4 // one past the last digit of the last group
	weight := (point+lead)/4 - 1   // the weight of the first group
	var groups [12]uint16
	n := 0
	for k := start; k < end; k += 4 {
		var g uint16
		for j := k; j < k+4; j++ {
			d := byte(0)
			if j >= 0 && j < 38 {
				d = digits[j]
			}
			g = g*10 + uint16(d)
		}
		groups[n] = g
		n++
	}
	first, last := 0, n
	for first < last && groups[first] == 0 {
		first++
		weight--
	}
	for last > first && groups[last-1] == 0 {
		last--
	}
	sign := uint16(0)
	if neg && last > first {
		sign = 0x4000
	}
	if last == first {
		weight = 0
	}
	b = appendLen(b, 8+2*(last-first))
	b = binary.BigEndian.AppendUint16(b, uint16(last-first))
	b = binary.BigEndian.AppendUint16(b, uint16(int16(weight)))
	b = binary.BigEndian.AppendUint16(b, sign)
	b = binary.BigEndian.AppendUint16(b, uint16(scale))
	for _, g := range groups[first:last] {
		b = binary.BigEndian.AppendUint16(b, g)
	}
	return b
}
