package export

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// TimeUnit is the unit of the numbers a date or timestamp column holds (Export.TimeUnits).
// Without one, a number in such a column is refused: seconds, milliseconds and Julian days
// all occur in the wild, and a guess writes a plausible wrong date.
type TimeUnit string

// The units a number in a date or timestamp column may be stated in.
const (
	UnitSeconds TimeUnit = "unix_seconds" // seconds since 1970-01-01 00:00:00 UTC
	UnitMillis  TimeUnit = "unix_millis"  // milliseconds since the Unix epoch
	UnitMicros  TimeUnit = "unix_micros"  // microseconds since the Unix epoch
	UnitNanos   TimeUnit = "unix_nanos"   // nanoseconds since the Unix epoch
	UnitDays    TimeUnit = "unix_days"    // days since 1970-01-01
)

// microsPer is how many microseconds one unit is, or (for nanoseconds) how many units one
// microsecond is, negated.
var microsPer = map[TimeUnit]int64{
	UnitSeconds: 1_000_000, UnitMillis: 1_000, UnitMicros: 1, UnitNanos: -1_000, UnitDays: 86_400_000_000,
}

const microsPerDay = 86_400_000_000

// refusal is why a value cannot be written: a reason (ErrInexact…) and what exactly. The
// reader that meets it adds the column, the row and the value (a *ValueError).
type refusal struct {
	reason error
	detail string
}

func (r *refusal) Error() string {
	if r.detail == "" {
		return r.reason.Error()
	}
	return r.reason.Error() + ": " + r.detail
}

func (r *refusal) Unwrap() error { return r.reason }

func refuse(reason error, format string, a ...any) error {
	return &refusal{reason: reason, detail: fmt.Sprintf(format, a...)}
}

// unitMicros converts an integer n in unit u to microseconds since the epoch, checking for
// overflow and for a value finer than a microsecond.
func unitMicros(n int64, u TimeUnit) (int64, error) {
	per, ok := microsPer[u]
	switch {
	case !ok:
		return 0, refuse(ErrNoTimeUnit, "no unit stated for this column")
	case per < 0:
		if n%(-per) != 0 {
			return 0, refuse(ErrInexact, "%d %s is finer than the column's microseconds", n, u)
		}
		return n / -per, nil
	}
	if n > math.MaxInt64/per || n < math.MinInt64/per {
		return 0, refuse(ErrOutOfRange, "%d %s overflows a microsecond timestamp", n, u)
	}
	return n * per, nil
}

// unitMicrosFloat converts a real x in unit u to microseconds: exactly, from the shortest
// decimal that reads back as x, or refused when that decimal is finer than a microsecond or
// out of range.
func unitMicrosFloat(x float64, u TimeUnit) (int64, error) {
	per, ok := microsPer[u]
	if !ok {
		return 0, refuse(ErrNoTimeUnit, "no unit stated for this column")
	}
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, refuse(ErrOutOfRange, "%v is not a point in time", x)
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	if !ok {
		return 0, refuse(ErrBadValue, "%v", x)
	}
	if per > 0 {
		r.Mul(r, new(big.Rat).SetInt64(per))
	} else {
		r.Quo(r, new(big.Rat).SetInt64(-per))
	}
	if !r.IsInt() {
		return 0, refuse(ErrInexact, "%s %s is finer than the column's microseconds", floatText(x), u)
	}
	if !r.Num().IsInt64() {
		return 0, refuse(ErrOutOfRange, "%s %s overflows a microsecond timestamp", floatText(x), u)
	}
	return r.Num().Int64(), nil
}

// isoTime is a parsed ISO-8601 date or timestamp: microseconds since the epoch of its wall
// clock (as if in UTC), whether it had a time of day and a zone, and the zone's offset.
type isoTime struct {
	micros  int64
	hasTime bool
	hasZone bool
	offset  int // seconds east of UTC
	subUS   bool
}

// parseISO parses the ISO-8601 forms SQLite databases hold: YYYY-MM-DD, then optionally
// 'T' or ' ' and HH:MM[:SS[.fraction]], then optionally Z, ±HH:MM, ±HHMM or ±HH. Anything
// else (another layout, a day that does not exist, 24:00, trailing text) is refused.
func parseISO(s string) (isoTime, error) {
	bad := func() (isoTime, error) {
		return isoTime{}, refuse(ErrBadTime, "want YYYY-MM-DD[ HH:MM[:SS[.ffffff]]][Z|±HH:MM]")
	}
	var t isoTime
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return bad()
	}
	y, ok1 := digits(s[0:4])
	mo, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) {
		return bad()
	}
	var h, mi, sec, nanos int
	rest := s[10:]
	if rest != "" && (rest[0] == 'T' || rest[0] == ' ') {
		t.hasTime = true
		rest = rest[1:]
		var ok bool
		if h, mi, sec, nanos, rest, ok = parseClock(rest); !ok {
			return bad()
		}
	}
	if rest != "" {
		off, ok := parseZone(rest)
		if !ok {
			return bad()
		}
		t.hasZone, t.offset = true, off
	}
	day := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	t.micros = day*microsPerDay + int64(h*3600+mi*60+sec)*1_000_000 + int64(nanos/1000)
	t.subUS = nanos%1000 != 0
	return t, nil
}

// parseClock parses HH:MM[:SS[.fraction]] at the start of s and returns the rest.
func parseClock(s string) (h, mi, sec, nanos int, rest string, ok bool) {
	if len(s) < 5 || s[2] != ':' {
		return
	}
	var ok1, ok2 bool
	h, ok1 = digits(s[0:2])
	mi, ok2 = digits(s[3:5])
	if !ok1 || !ok2 || h > 23 || mi > 59 {
		return 0, 0, 0, 0, "", false
	}
	rest = s[5:]
	if len(rest) >= 3 && rest[0] == ':' {
		var ok3 bool
		if sec, ok3 = digits(rest[1:3]); !ok3 || sec > 59 {
			return 0, 0, 0, 0, "", false
		}
		rest = rest[3:]
		if len(rest) > 1 && rest[0] == '.' {
			n := 1
			for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
				n++
			}
			frac := rest[1:n]
			if frac == "" || len(frac) > 9 {
				return 0, 0, 0, 0, "", false
			}
			f, _ := strconv.Atoi(frac + strings.Repeat("0", 9-len(frac)))
			nanos, rest = f, rest[n:]
		}
	}
	return h, mi, sec, nanos, rest, true
}

// parseZone parses Z, ±HH:MM, ±HHMM or ±HH; it returns the offset in seconds east of UTC.
func parseZone(s string) (int, bool) {
	if s == "Z" || s == "z" {
		return 0, true
	}
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	h, ok := digits(s[1:3])
	m := 0
	switch rest := s[3:]; {
	case rest == "":
	case len(rest) == 3 && rest[0] == ':':
		m, ok = digits(rest[1:])
	case len(rest) == 2:
		m, ok = digits(rest)
	default:
		return 0, false
	}
	if !ok || h > 23 || m > 59 {
		return 0, false
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

func digits(s string) (int, bool) {
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, s != ""
}

func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// formatMicros is microseconds since the epoch as YYYY-MM-DD HH:MM:SS[.ffffff], for any
// int64 (years past 9999 and before 1 included), for messages.
func formatMicros(us int64) string {
	days, rem := us/microsPerDay, us%microsPerDay
	if rem < 0 {
		days, rem = days-1, rem+microsPerDay
	}
	t := time.Date(1970, 1, 1+int(days), 0, 0, 0, int(rem)*1000, time.UTC)
	return t.Format("2006-01-02 15:04:05.999999")
}
