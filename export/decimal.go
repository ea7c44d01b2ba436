package export

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// pow10 holds the powers of ten that fit an int64.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// appendDecimalText appends a decimal in its text form. The common case (at most 18 digits,
// no more fractional digits than the scale, within the precision) is parsed here without
// allocating; anything else is parsed exactly, and refused when it does not fit (NaN, or a
// value with more digits than the column keeps), never rounded.
func appendDecimalText(b *array.Decimal128Builder, raw []byte) error {
	dt := b.Type().(*arrow.Decimal128Type)
	if n, ok := parseDecimalFast(raw, dt.Precision, dt.Scale); ok {
		b.Append(decimal128.FromI64(n))
		return nil
	}
	d, ok := parseDecimal(string(raw))
	if !ok {
		return refuse(ErrWrongType, "not a decimal(%d,%d)", dt.Precision, dt.Scale)
	}
	if !d.fits(dt.Precision, dt.Scale) {
		return refuse(ErrInexact, "%s is not a decimal(%d,%d): %s", d, dt.Precision, dt.Scale, misfit(d, dt.Precision, dt.Scale))
	}
	n, err := d.decimal128(dt.Scale)
	if err != nil {
		return refuse(ErrInexact, "%s: %v", d, err)
	}
	b.Append(n)
	return nil
}

// parseDecimalFast parses [-]digits[.digits] scaled to scale, when it fits an int64 exactly
// and precision holds it.
func parseDecimalFast(raw []byte, precision, scale int32) (int64, bool) {
	neg := len(raw) > 0 && raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	var n int64
	digits, intDigits, frac := 0, 0, -1
	for _, c := range raw {
		switch {
		case c >= '0' && c <= '9':
			if digits == 0 && c == '0' && frac < 0 {
				continue // leading zeros of the integer part
			}
			digits++
			n = n*10 + int64(c-'0')
			if frac >= 0 {
				frac++
			} else {
				intDigits++
			}
		case c == '.' && frac < 0:
			frac = 0
		default:
			return 0, false
		}
		if digits > 18 {
			return 0, false
		}
	}
	if len(raw) == 0 || frac == 0 && len(raw) == 1 {
		return 0, false
	}
	frac = max(frac, 0)
	if int32(frac) > scale || int32(intDigits)+scale > precision || digits+int(scale)-frac > 18 {
		return 0, false
	}
	n *= pow10[int(scale)-frac]
	if neg {
		n = -n
	}
	return n, true
}
