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
// only for the transactions open at the read, so a run holds back the rows at
// its largest value until the clock has passed it: until no transaction that begins now can
// write it. An instant (timestamptz(p)) is past once the source's clock is a second beyond
// its end; a wall clock (a date, a timestamp(p) without time zone: see wallClock) once it is
// so in the zone furthest behind UTC. SQLite's one writer at a time does not help here either:
// a SQLite date or timestamp is held the same way (see past). Until then the window stops
// below the value, and the next run exports its rows.

// repeatUnit is how long the values of a cursor column c repeat: a day for a date, 10^-p s
// for a PostgreSQL timestamp(p) with p < 6, a second for a SQLite timestamp (its precision is
// not declared, and CURRENT_TIMESTAMP is to the second), and 0 when every transaction that
// begins after the read writes a larger value (a PostgreSQL timestamp to the microsecond, an
// integer).
func repeatUnit(c Column, sqlite bool) time.Duration {
	switch {
	case c.Type.ID() == arrow.DATE32:
		return 24 * time.Hour
	case c.Type.ID() != arrow.TIMESTAMP:
		return 0
	case sqlite:
		return time.Second
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
	if i < 0 || upTo.IsZero() || upTo.String() == w.After.String() {
		return upTo, why, nil
	}
	c := r.cols[i]
	unit := repeatUnit(c, r.src.pg == nil)
	top, wall, ok := timeOf(c, upTo)
	if text, ok := upTo.Value().(string); unit != 0 && ok && len(text) == len(time.DateOnly) {
		unit = 24 * time.Hour // a SQLite date in a timestamp column: date('now')
	}
	if unit == 0 || !ok {
		return upTo, why, nil
	}
	past, err := r.src.past(ctx, r.e, wall)
	if err != nil {
		return Bound{}, "", err
	}
	if top.Add(unit).Before(past) {
		return upTo, why, nil
	}
	below, err := r.src.below(ctx, r.e, w, upTo)
	if err != nil {
		return Bound{}, "", err
	}
	held := fmt.Sprintf("the rows at the cursor's largest value %s wait for the next run: a %s repeats its value for %s, "+
		"and a transaction that begins now may still write it", upTo, c.DBType, unit)
	if why != "" {
		held = why + "; " + held
	}
	r.o.log().Info("export: a delta run's window stops below a cursor value that may still be written", "export", r.e.Name,
		"run_id", r.rec.RunID, "held", held)
	return below, held, nil
}

// timeOf reads a time cursor's bound b as a time, and whether it is a wall clock (a date or a
// timestamp without a zone, as if in UTC) rather than an instant: PostgreSQL's as the driver
// read it; SQLite's ISO text, or number in the column's unit (an instant). ok is false for a
// value it cannot read so (the run refuses such a value when it writes it).
func timeOf(c Column, b Bound) (t time.Time, wall, ok bool) {
	switch v := b.Value().(type) {
	case time.Time:
		return v.UTC(), wallClock(c.Type), true
	case string:
		iso, err := parseISO(v)
		if err != nil {
			return time.Time{}, false, false
		}
		if iso.hasZone {
			return time.UnixMicro(iso.micros - int64(iso.offset)*1_000_000).UTC(), false, true
		}
		return time.UnixMicro(iso.micros).UTC(), true, true
	case int64:
		us, err := unitMicros(v, c.unit)
		return time.UnixMicro(us).UTC(), false, err == nil
	}
	return time.Time{}, false, false
}

// past is a time such that a value before it can no longer be written by a transaction that
// begins now: a second before the source's clock (PostgreSQL's, or this machine's for SQLite,
// whose CURRENT_TIMESTAMP is this machine's clock). For a wall clock, PostgreSQL's writer may
// be in any zone (12 hours behind UTC at most); SQLite's writes UTC (CURRENT_TIMESTAMP) or, with
// 'localtime', this machine's zone: the earlier of the two.
func (s *source) past(ctx context.Context, e *Export, wall bool) (time.Time, error) {
	now := time.Now()
	if s.pg != nil {
		if err := s.q().QueryRowContext(ctx, "SELECT statement_timestamp()").Scan(&now); err != nil {
			return time.Time{}, s.d.classify(err, s.what(e))
		}
	}
	now = now.UTC().Add(-time.Second)
	switch {
	case wall && s.pg != nil:
		return now.Add(-maxBehindUTC), nil
	case wall:
		l := now.Local()
		local := time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
		if local.Before(now) {
			return local, nil
		}
		return now, nil
	}
	return now, nil
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
