package load

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgtype"
)

// field splits an encoded field into its bytes, or nil for NULL.
func field(t *testing.T, b []byte) []byte {
	t.Helper()
	n := int32(binary.BigEndian.Uint32(b))
	if n == -1 {
		if len(b) != 4 {
			t.Fatalf("a NULL with %d more bytes", len(b)-4)
		}
		return nil
	}
	if int(n) != len(b)-4 {
		t.Fatalf("a field of length %d holds %d bytes", n, len(b)-4)
	}
	return b[4:]
}

// pgxEncodes is pgx's binary encoding of v as the type oid: the oracle of every encoder.
func pgxEncodes(t *testing.T, oid uint32, v any) []byte {
	t.Helper()
	b, err := pgtype.NewMap().Encode(oid, pgtype.BinaryFormatCode, v, nil)
	if err != nil {
		t.Fatalf("pgx encoding %v: %v", v, err)
	}
	return b
}

// TestEncodeAsPgx: every type the table maps is encoded byte for byte as pgx encodes the
// same value, NULLs included.
func TestEncodeAsPgx(t *testing.T) {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 200
	check := func(name string, a arrow.Array, want string, oid uint32, value func(i int) any) {
		t.Helper()
		enc, err := encoderOf(a, want)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range a.Len() {
			got := field(t, enc(nil, i))
			if a.IsNull(i) {
				if got != nil {
					t.Fatalf("%s row %d: NULL encoded as %x", name, i, got)
				}
				continue
			}
			if w := pgxEncodes(t, oid, value(i)); !bytes.Equal(got, w) {
				t.Fatalf("%s row %d (%v): %x, pgx %x", name, i, value(i), got, w)
			}
		}
	}
	valid := make([]bool, n)
	for i := range valid {
		valid[i] = i%17 != 3
	}

	i64 := make([]int64, n)
	i32 := make([]int32, n)
	i16 := make([]int16, n)
	f64 := make([]float64, n)
	f32 := make([]float32, n)
	str := make([]string, n)
	bools := make([]bool, n)
	days := make([]arrow.Date32, n)
	micros := make([]arrow.Timestamp, n)
	for i := range n {
		i64[i], i32[i], i16[i] = int64(rng.Uint64()), int32(rng.Uint32()), int16(rng.Uint32())
		f64[i], f32[i] = rng.NormFloat64()*1e10, float32(rng.NormFloat64())
		str[i] = string(rune('a'+i%26)) + "ü€" + string(make([]byte, i%5))
		bools[i] = i%2 == 0
		days[i] = arrow.Date32(rng.IntN(200_000) - 100_000)
		micros[i] = arrow.Timestamp(rng.Int64N(8e15) - 4e15)
	}
	f64[0], f64[1], f64[2] = math.Inf(1), math.NaN(), math.Copysign(0, -1)

	ib := array.NewInt64Builder(mem)
	ib.AppendValues(i64, valid)
	check("int64", ib.NewArray(), "int64", pgtype.Int8OID, func(i int) any { return i64[i] })
	i32b := array.NewInt32Builder(mem)
	i32b.AppendValues(i32, valid)
	check("int32", i32b.NewArray(), "int32", pgtype.Int4OID, func(i int) any { return i32[i] })
	i16b := array.NewInt16Builder(mem)
	i16b.AppendValues(i16, valid)
	check("int16", i16b.NewArray(), "int16", pgtype.Int2OID, func(i int) any { return i16[i] })
	fb := array.NewFloat64Builder(mem)
	fb.AppendValues(f64, valid)
	check("float64", fb.NewArray(), "float64", pgtype.Float8OID, func(i int) any { return f64[i] })
	f32b := array.NewFloat32Builder(mem)
	f32b.AppendValues(f32, valid)
	check("float32", f32b.NewArray(), "float32", pgtype.Float4OID, func(i int) any { return f32[i] })
	sb := array.NewStringBuilder(mem)
	sb.AppendValues(str, valid)
	check("utf8", sb.NewArray(), "utf8", pgtype.TextOID, func(i int) any { return str[i] })
	bb := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	for i := range n {
		bb.Append([]byte(str[i]))
	}
	check("binary", bb.NewArray(), "binary", pgtype.ByteaOID, func(i int) any { return []byte(str[i]) })
	jb := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	for i := range n {
		jb.Append([]byte(`{"k": ` + string(rune('0'+i%10)) + `}`))
	}
	check("json", jb.NewArray(), jsonType, pgtype.JSONBOID, func(i int) any { return `{"k": ` + string(rune('0'+i%10)) + `}` })
	boolb := array.NewBooleanBuilder(mem)
	boolb.AppendValues(bools, valid)
	check("bool", boolb.NewArray(), "bool", pgtype.BoolOID, func(i int) any { return bools[i] })
	db := array.NewDate32Builder(mem)
	db.AppendValues(days, valid)
	check("date32", db.NewArray(), "date32", pgtype.DateOID, func(i int) any {
		return pgtype.Date{Time: time.Unix(int64(days[i])*86400, 0).UTC(), Valid: true}
	})
	for _, tz := range []string{"", "UTC"} {
		typ := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: tz}
		tb := array.NewTimestampBuilder(mem, typ)
		tb.AppendValues(micros, valid)
		oid := uint32(pgtype.TimestampOID)
		if tz != "" {
			oid = pgtype.TimestamptzOID
		}
		check(typ.String(), tb.NewArray(), typ.String(), oid, func(i int) any {
			if tz == "" {
				return pgtype.Timestamp{Time: time.UnixMicro(int64(micros[i])).UTC(), Valid: true}
			}
			return pgtype.Timestamptz{Time: time.UnixMicro(int64(micros[i])).UTC(), Valid: true}
		})
	}
	ub := extensions.NewUUIDBuilder(mem)
	var ids [][16]byte
	for range n {
		var u [16]byte
		binary.BigEndian.PutUint64(u[:8], rng.Uint64())
		binary.BigEndian.PutUint64(u[8:], rng.Uint64())
		ids = append(ids, u)
		ub.Append(u)
	}
	check("uuid", ub.NewArray(), "extension<arrow.uuid>", pgtype.UUIDOID, func(i int) any { return pgtype.UUID{Bytes: ids[i], Valid: true} })
}

// TestEncodeNumeric: a decimal(p, s) of every scale, near zero, at 38 digits, negative and
// with trailing zeros decodes (by pgx) to the value it holds.
func TestEncodeNumeric(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := pgtype.NewMap()
	max38 := new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil), big.NewInt(1))
	for scale := int32(0); scale <= 38; scale++ {
		values := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(-1), big.NewInt(10000), big.NewInt(-1125),
			new(big.Int).Set(max38), new(big.Int).Neg(max38), big.NewInt(1_000_000_000_000)}
		for range 50 {
			v := new(big.Int).SetUint64(rng.Uint64())
			v.Mul(v, new(big.Int).SetUint64(rng.Uint64()))
			v.Mod(v, max38)
			if rng.IntN(2) == 0 {
				v.Neg(v)
			}
			values = append(values, v, new(big.Int).Div(v, big.NewInt(1e12)))
		}
		for _, v := range values {
			enc := field(t, appendNumeric(nil, decimal128.FromBigInt(v), scale))
			var got pgtype.Numeric
			if err := m.Scan(pgtype.NumericOID, pgtype.BinaryFormatCode, enc, &got); err != nil {
				t.Fatalf("%s e-%d: pgx cannot decode %x: %v", v, scale, enc, err)
			}
			// got = got.Int × 10^got.Exp; want v × 10^-scale
			g := new(big.Int).Set(got.Int)
			want := new(big.Int).Set(v)
			if d := int(got.Exp) + int(scale); d > 0 {
				g.Mul(g, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d)), nil))
			} else if d < 0 {
				want.Mul(want, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-d)), nil))
			}
			if g.Cmp(want) != 0 {
				t.Fatalf("%s e-%d: encoded %x decodes to %s e%d", v, scale, enc, got.Int, got.Exp)
			}
			if dscale := int32(binary.BigEndian.Uint16(enc[6:8])); dscale != scale {
				t.Fatalf("%s e-%d: display scale %d", v, scale, dscale)
			}
		}
	}
}
