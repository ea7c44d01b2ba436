package export

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// A cursor whose values are coarser than the clock repeats its largest value: every row
// written on a day has the same date, every row of a second the same timestamp(0). A run that
// read that value as its window's top, and the next run that starts past it, would both miss
// a row a transaction begun after the read writes with it. The delta rule of delta.go waits
// only for the transactions open at the read, so on PostgreSQL a run holds back the rows at
// its largest value until the clock has passed it: until no transaction that begins now can
// write it. An instant (timestamptz(p)) is past once the source's clock is a second beyond
// its end; a wall clock (a date, a timestamp(p) without time zone: see wallClock) once it is
// so in the zone furthest behind UTC. Until then the window stops below the value, and the
// next run exports its rows.

// repeatUnit is how long the values of a PostgreSQL cursor column c repeat: a day for a date,
// 10^-p s for a timestamp(p) with p < 6, and 0 when every transaction that begins after the
// read writes a larger value (a timestamp to the microsecond, an integer from a sequence).
func repeatUnit(c Column) time.Duration {
	if c.Type.ID() == arrow.DATE32 {
		return 24 * time.Hour
	}
	if c.Type.ID() != arrow.TIMESTAMP {
		return 0
	}
	m := precScale.FindStringSubmatch(c.DBType)
	if m == nil {
		return 0
	}
	p, err := strconv.Atoi(m[1])
	if err != nil || p >= 6 {
		return 0
	}
	return time.Duration(math.Pow10(9 - p))
}

// settleRepeats lowers upTo, the window's top so far (why says why it is below the largest
// value read, or is empty), below a value a transaction that has not begun may still write
// (see above). It returns the window's top and why.
func (r *runner) settleRepeats(ctx context.Context, w window, upTo Bound, why string) (Bound, string, error) {
	i := slices.IndexFunc(r.cols, func(c Column) bool { return c.Name == w.Column })
	top, isTime := upTo.Value().(time.Time)
	if r.src.pg == nil || !isTime || i < 0 || upTo.String() == w.After.String() {
		return upTo, why, nil
	}
	unit := repeatUnit(r.cols[i])
	if unit == 0 {
		return upTo, why, nil
	}
	var now time.Time
	if err := r.src.q().QueryRowContext(ctx, "SELECT statement_timestamp()").Scan(&now); err != nil {
		return Bound{}, "", r.src.d.classify(err, r.src.what(r.e))
	}
	past := now.UTC().Add(-time.Second)
	if wallClock(r.cols[i].Type) {
		past = past.Add(-maxBehindUTC) // top is that wall clock read as UTC
	}
	if top.Add(unit).Before(past) {
		return upTo, why, nil
	}
	below, err := r.src.below(ctx, r.e, w, upTo)
	if err != nil {
		return Bound{}, "", err
	}
	held := fmt.Sprintf("the rows at the cursor's largest value %s wait for the next run: a %s repeats its value for %s, "+
		"and a transaction that begins now may still write it", upTo, r.cols[i].DBType, unit)
	if why != "" {
		held = why + "; " + held
	}
	r.o.log().Info("export: a delta run's window stops below a cursor value that may still be written", "export", r.e.Name,
		"run_id", r.rec.RunID, "held", held)
	return below, held, nil
}

// below returns the largest cursor value of w less than v, or w.After when there is none.
func (s *source) below(ctx context.Context, e *Export, w window, v Bound) (Bound, error) {
	col := quoteIdent(w.Column)
	within := window{Column: w.Column, After: w.After, UpTo: v}
	clause, args := s.where(within, []string{fmt.Sprintf("%s < %s", col, s.d.param(1))}, []any{v.Value()})
	q := fmt.Sprintf("SELECT %s FROM %s%s ORDER BY %s DESC LIMIT 1", s.d.boundExpr(col), relation(e), clause, col)
	b, err := s.bound(ctx, e, q, args)
	if err != nil || !b.IsZero() {
		return b, err
	}
	return w.After, nil
}
