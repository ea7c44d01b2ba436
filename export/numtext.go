package export

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// decimalText is a decimal number as digits: value = (-1 if neg) × digits × 10^-scale, with
// no leading zeros in digits ("" for zero) and no trailing zeros after the point.
type decimalText struct {
	neg    bool
	digits string
	scale  int // digits after the point; negative for trailing zeros before it
}

// parseDecimal reads [+-]digits[.digits][(e|E)[+-]digits] (one of the digit runs may be
// empty, not both) exactly: no rounding, no float.
func parseDecimal(s string) (decimalText, bool) {
	var d decimalText
	if s != "" && (s[0] == '+' || s[0] == '-') {
		d.neg = s[0] == '-'
		s = s[1:]
	}
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 1000 || e < -1000 {
			return d, false
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" && frac == "" {
		return d, false
	}
	for _, c := range []byte(intPart + frac) {
		if c < '0' || c > '9' {
			return d, false
		}
	}
	all := strings.TrimLeft(intPart+frac, "0")
	d.scale = len(frac) - exp
	trimmed := strings.TrimRight(all, "0")
	d.scale -= len(all) - len(trimmed)
	d.digits = trimmed
	if d.digits == "" {
		d.neg, d.scale = false, 0
	}
	return d, true
}

// intDigits is how many digits the number has before the point.
func (d decimalText) intDigits() int { return max(len(d.digits)-d.scale, 0) }

// fits reports whether d is exactly a decimal(precision, scale).
func (d decimalText) fits(precision, scale int32) bool {
	return d.scale <= int(scale) && d.intDigits() <= int(precision-scale)
}

// decimal128 returns d at scale; d must fit it.
func (d decimalText) decimal128(scale int32) (decimal128.Num, error) {
	s := d.digits + strings.Repeat("0", int(scale)-d.scale)
	if s == "" {
		s = "0"
	}
	n, err := decimal128.FromString(s, 38, 0)
	if d.neg {
		n = n.Negate()
	}
	return n, err
}

// String is d in fixed notation, without an exponent.
func (d decimalText) String() string {
	if d.digits == "" {
		return "0"
	}
	var b strings.Builder
	if d.neg {
		b.WriteByte('-')
	}
	switch {
	case d.scale <= 0:
		b.WriteString(d.digits)
		b.WriteString(strings.Repeat("0", -d.scale))
	case d.scale >= len(d.digits):
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", d.scale-len(d.digits)))
		b.WriteString(d.digits)
	default:
		b.WriteString(d.digits[:len(d.digits)-d.scale])
		b.WriteByte('.')
		b.WriteString(d.digits[len(d.digits)-d.scale:])
	}
	return b.String()
}

// floatDecimal is the shortest decimal that reads back as x (what a REAL is, exactly as far
// as any reader can tell); ok is false for infinities and NaN.
func floatDecimal(x float64) (decimalText, bool) {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return decimalText{}, false
	}
	return parseDecimal(strconv.FormatFloat(x, 'e', -1, 64))
}

// floatText is a REAL as text: the shortest decimal that reads back as the same double, in
// fixed notation between 1e-6 and 1e21 with ".0" on whole numbers (as SQLite writes them),
// in exponent notation beyond.
func floatText(x float64) string {
	switch a := math.Abs(x); {
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	case math.IsNaN(x):
		return "NaN"
	case a != 0 && (a < 1e-6 || a >= 1e21):
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
