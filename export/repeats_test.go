package export

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestRepeatUnit: how long a PostgreSQL cursor's values repeat, from its type: a date's day,
// a timestamp(p)'s 10^-p s below microseconds, nothing for a microsecond timestamp or an
// integer.
func TestRepeatUnit(t *testing.T) {
	for _, c := range []struct {
		typ  arrow.DataType
		db   string
		want time.Duration
	}{
		{arrow.FixedWidthTypes.Date32, "date", 24 * time.Hour},
		{tsNaive, "timestamp(0) without time zone", time.Second},
		{tsUTC, "timestamp(3) with time zone", time.Millisecond},
		{tsUTC, "timestamp(5) with time zone", 10 * time.Microsecond},
		{tsUTC, "timestamp with time zone", 0},
		{tsNaive, "timestamp(6) without time zone", 0},
		{arrow.PrimitiveTypes.Int64, "bigint", 0},
	} {
		if got := repeatUnit(Column{Name: "c", DBType: c.db, Type: c.typ}, false); got != c.want {
			t.Errorf("%s: %s, want %s", c.db, got, c.want)
		}
	}
	if got := repeatUnit(Column{Name: "at", DBType: "TIMESTAMP", Type: tsNaive}, true); got != time.Second {
		t.Errorf("a SQLite timestamp repeats for %s, want a second (CURRENT_TIMESTAMP)", got)
	}
}
