package export

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// A delta run must never skip a row that commits late: a transaction that took its cursor
// value (a sequence's next value, now()) before the run read the cursor's largest value, and
// commits after the run passed that value, would otherwise be behind every later run's window.
//
// PostgreSQL. A value at most the largest one a run read was handed out before that read, to a
// transaction open then. So once the run has read the largest value, it lists the transactions
// open in the database (sessions in a transaction, from pg_stat_activity, and every transaction
// in progress in a snapshot, which wrote something) and waits, up to Export.DeltaWait, until
// each has ended; only then does it take the snapshot it reads its rows from, which sees every
// such transaction that committed. A transaction still open after the wait holds the window
// back: a date or timestamp cursor stops before the oldest such transaction's start (a value it
// writes with the database's clock is never earlier; a date or a timestamp without time zone
// is the writer's wall clock, so it stops 12 hours before, as far as a zone is behind UTC),
// an integer cursor, or a transaction whose
// start the run may not see, stays at the last run's cursor. The run says so in a warning and in
// its window (CursorWindow.Held), and the next run exports those rows.
//
// SQLite has one writer at a time: a transaction writes only while it holds the database's
// write lock, until it commits, so a value it takes inside its write (a rowid, AUTOINCREMENT,
// CURRENT_TIMESTAMP in the statement) is past every committed one, and no other writer commits
// before it. A value an application takes before its write transaction begins is not covered.

// openTx is a transaction that was open when a delta run read its cursor's largest value.
type openTx struct {
	pid         int64
	xactStart   time.Time // zero when the run cannot see it
	xid         string    // the xid8 of a transaction that wrote, when it is known by it alone
	who         string    // for messages: the pid, user and application, or the prepared gid
	knownToWait bool      // a session (pid, xact_start) rather than an xid
}

// pgOpenSessions lists the sessions of this database in a transaction, but the run's own and
// those that cannot write rows (autovacuum, parallel workers of another session, WAL senders,
// other wharf exports' snapshots).
const pgOpenSessions = `SELECT a.pid, a.xact_start, coalesce(a.usename, ''), coalesce(a.application_name, '')
FROM pg_stat_activity a
WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.xact_start IS NOT NULL
  AND a.backend_type NOT IN ('autovacuum worker', 'parallel worker', 'walsender')
  AND a.application_name IS DISTINCT FROM $1`

// pgOpenXids lists the transactions in progress that wrote something, with the session or
// prepared transaction holding each where the run may see it; those of another database
// (where the run may see it) are left out.
const pgOpenXids = `SELECT x::text, coalesce(l.pid, 0), coalesce(p.gid, '')
FROM pg_snapshot_xip(pg_current_snapshot()) AS x
LEFT JOIN pg_locks l ON l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted AND l.transactionid = xid(x)
LEFT JOIN pg_stat_activity a ON a.pid = l.pid
LEFT JOIN pg_prepared_xacts p ON p.transaction = xid(x)
WHERE l.pid IS DISTINCT FROM pg_backend_pid()
  AND coalesce(a.datname, p.database, current_database()) = current_database()`

// settleDelta applies the rule above to upTo, the largest cursor value the run read within w.
// It returns the window's upper bound, and why it is lower than upTo (empty when it is not).
func (r *runner) settleDelta(ctx context.Context, w window, upTo Bound) (Bound, string, error) {
	if r.src.pg == nil || upTo.IsZero() {
		return upTo, "", nil
	}
	open, err := r.src.openTransactions(ctx, r.e)
	if err != nil {
		return Bound{}, "", err
	}
	wait := r.e.deltaWait()
	open, err = r.src.waitTransactions(ctx, r.e, open, wait)
	if err != nil || len(open) == 0 {
		return upTo, "", err
	}
	held, why, err := r.src.heldBound(ctx, r.e, r.cols, w, upTo, open)
	if err != nil {
		return Bound{}, "", err
	}
	why = fmt.Sprintf("%s still open after delta_wait %s: %s", open[0].who, wait, why)
	if len(open) > 1 {
		why = fmt.Sprintf("%d transactions, the oldest %s", len(open), why)
	}
	r.o.log().Warn("export: a delta run's window is held back by an open transaction", "export", r.e.Name,
		"run_id", r.rec.RunID, "held", why)
	return held, why, nil
}

// openTransactions lists the transactions open in the source database now (see above).
func (s *source) openTransactions(ctx context.Context, e *Export) ([]openTx, error) {
	sessions, err := s.openSessions(ctx, e)
	if err != nil {
		return nil, err
	}
	byPid := map[int64]bool{}
	for _, t := range sessions {
		byPid[t.pid] = true
	}
	rows, err := s.db.QueryContext(ctx, pgOpenXids)
	if err != nil {
		return nil, s.d.classify(err, s.what(e))
	}
	defer rows.Close()
	var xids []openTx
	for rows.Next() {
		var t openTx
		var gid string
		if err := rows.Scan(&t.xid, &t.pid, &gid); err != nil {
			return nil, s.d.classify(err, s.what(e))
		}
		if byPid[t.pid] {
			continue // followed as its session
		}
		t.who = "transaction " + t.xid
		switch {
		case gid != "":
			t.who += fmt.Sprintf(" (prepared, gid %q)", gid)
		case t.pid != 0:
			t.who += fmt.Sprintf(" (pid %d)", t.pid)
		}
		xids = append(xids, t)
	}
	if err := rows.Err(); err != nil {
		return nil, s.d.classify(err, s.what(e))
	}
	return append(sessions, xids...), nil
}

func (s *source) openSessions(ctx context.Context, e *Export) ([]openTx, error) {
	rows, err := s.db.QueryContext(ctx, pgOpenSessions, pgSnapshotApp)
	if err != nil {
		return nil, s.d.classify(err, s.what(e))
	}
	defer rows.Close()
	var out []openTx
	for rows.Next() {
		var t openTx
		var user, app string
		if err := rows.Scan(&t.pid, &t.xactStart, &user, &app); err != nil {
			return nil, s.d.classify(err, s.what(e))
		}
		t.xactStart, t.knownToWait = t.xactStart.UTC(), true
		t.who = fmt.Sprintf("the transaction of pid %d (user %q, application %q) open since %s", t.pid, user, app,
			t.xactStart.Format(time.RFC3339Nano))
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, s.d.classify(err, s.what(e))
	}
	return out, nil
}

// waitTransactions waits until every transaction of open has ended, or wait has passed, and
// returns those still open, the oldest first.
func (s *source) waitTransactions(ctx context.Context, e *Export, open []openTx, wait time.Duration) ([]openTx, error) {
	deadline := time.Now().Add(wait)
	pause := 50 * time.Millisecond
	for len(open) > 0 {
		still, err := s.stillOpen(ctx, e, open)
		if err != nil {
			return nil, err
		}
		open = still
		if len(open) == 0 || !time.Now().Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(pause, time.Until(deadline))):
		}
		pause = min(2*pause, time.Second)
	}
	slices.SortStableFunc(open, func(a, b openTx) int {
		switch {
		case a.xactStart.IsZero() != b.xactStart.IsZero():
			if a.xactStart.IsZero() {
				return -1 // an unknown start is the most holding back
			}
			return 1
		}
		return a.xactStart.Compare(b.xactStart)
	})
	return open, nil
}

// stillOpen returns the transactions of open that have not ended: a session still in the same
// transaction (same pid and start), an xid still in progress.
func (s *source) stillOpen(ctx context.Context, e *Export, open []openTx) ([]openTx, error) {
	now, err := s.openSessions(ctx, e)
	if err != nil {
		return nil, err
	}
	var xids []string
	for _, t := range open {
		if !t.knownToWait {
			xids = append(xids, t.xid)
		}
	}
	inProgress := map[string]bool{}
	if len(xids) > 0 {
		rows, err := s.db.QueryContext(ctx, `SELECT x FROM unnest($1::text[]) AS x WHERE pg_xact_status(x::xid8) = 'in progress'`, xids)
		if err != nil {
			return nil, s.d.classify(err, s.what(e))
		}
		defer rows.Close()
		for rows.Next() {
			var x string
			if err := rows.Scan(&x); err != nil {
				return nil, s.d.classify(err, s.what(e))
			}
			inProgress[x] = true
		}
		if err := rows.Err(); err != nil {
			return nil, s.d.classify(err, s.what(e))
		}
	}
	var still []openTx
	for _, t := range open {
		if t.knownToWait && slices.ContainsFunc(now, func(n openTx) bool { return n.pid == t.pid && n.xactStart.Equal(t.xactStart) }) ||
			!t.knownToWait && inProgress[t.xid] {
			still = append(still, t)
		}
	}
	return still, nil
}

// heldBound is the window's upper bound while the transactions of open (the oldest first) are
// open: below the oldest's start for a date or timestamp cursor, when every start is known;
// the last run's cursor otherwise.
func (s *source) heldBound(ctx context.Context, e *Export, cols []Column, w window, upTo Bound, open []openTx) (Bound, string, error) {
	i := slices.IndexFunc(cols, func(c Column) bool { return c.Name == w.Column })
	oldest := open[0].xactStart
	if i < 0 || keyKindOf(cols[i].Type) != keyTime || oldest.IsZero() {
		why := "the cursor stays at the last run's value"
		if oldest.IsZero() {
			why += " (its start is not known: the export's role sees other roles' transactions with pg_read_all_stats)"
		}
		return w.After, why, nil
	}
	why := "the window stops before its start"
	if wallClock(cols[i].Type) {
		oldest = oldest.Add(-maxBehindUTC)
		why = fmt.Sprintf("the window stops %s before its start (a date or a timestamp without time zone holds the writer's wall clock, in a zone as far as %[1]s behind UTC)", maxBehindUTC)
	}
	col := quoteIdent(w.Column)
	within := window{Column: w.Column, After: w.After, UpTo: upTo}
	clause, args := s.where(within, []string{fmt.Sprintf("%s < %s", col, s.d.param(1))}, []any{oldest})
	q := fmt.Sprintf("SELECT %s FROM %s%s ORDER BY %s DESC LIMIT 1", s.d.boundExpr(col), relation(e), clause, col)
	b, err := s.bound(ctx, e, q, args)
	if err != nil {
		return Bound{}, "", err
	}
	if b.IsZero() {
		b = w.After
	}
	return b, why, nil
}

// maxBehindUTC is how far a time zone's wall clock can be behind UTC (Etc/GMT+12).
const maxBehindUTC = 12 * time.Hour

// wallClock reports whether a cursor of type t holds a wall clock rather than an instant: a
// date or a timestamp without time zone, written (by now(), CURRENT_DATE) in the writing
// session's TimeZone, which the run cannot know. A transaction that began at instant T writes
// such a value no earlier than T's wall clock in the zone furthest behind UTC.
func wallClock(t arrow.DataType) bool {
	ts, ok := t.(*arrow.TimestampType)
	return t.ID() == arrow.DATE32 || ok && ts.TimeZone == ""
}
