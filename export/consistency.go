package export

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultDeltaWait is Export.DeltaWait when it is nil.
const DefaultDeltaWait = time.Minute

// checkReadOptions validates and defaults the options that decide how the source is read.
func (e *Export) checkReadOptions(bad func(field, format string, a ...any) error) error {
	e.Consistency = cmp.Or(e.Consistency, ConsistencySnapshot)
	if e.Consistency != ConsistencySnapshot && e.Consistency != ConsistencyChunk {
		return bad("consistency", "%q: want snapshot or chunk", e.Consistency)
	}
	if e.DeltaWait != nil && *e.DeltaWait < 0 {
		return bad("delta_wait", "%s: want 0 or more", *e.DeltaWait)
	}
	return nil
}

func (e *Export) deltaWait() time.Duration {
	if e.DeltaWait == nil {
		return DefaultDeltaWait
	}
	return *e.DeltaWait
}

// querier runs the source's queries that are not a PostgreSQL chunk's: the pool, or the
// transaction that holds the run's snapshot.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// snapTx is the transaction a run in mode snapshot holds open from before its plan to its
// end: every query of the run reads in it (SQLite), or in a transaction that imports it
// (PostgreSQL).
type snapTx struct {
	tx   *sql.Tx
	info Consistency
}

// q is where the source's plan, window and SQLite chunk queries go.
func (s *source) q() querier {
	if s.snap != nil {
		return s.snap.tx
	}
	return s.db
}

// pgSnapshotApp names a snapshot's coordinating session in pg_stat_activity, for the DBA who
// wonders who holds the xmin horizon, and so that a delta run does not wait for it (it is read
// only and writes nothing).
const pgSnapshotApp = "wharf export snapshot"

// beginSnapshot takes the run's snapshot and holds it until Close. ctx must last the run: the
// transaction ends when it is done.
func (s *source) beginSnapshot(ctx context.Context, e *Export) error {
	if s.pg == nil {
		tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return s.d.classify(err, s.what(e))
		}
		// SQLite starts a read transaction at its first read: this one takes the snapshot.
		var n int64
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
			_ = tx.Rollback()
			return s.d.classify(err, s.what(e))
		}
		s.snap = &snapTx{tx: tx, info: Consistency{Mode: ConsistencySnapshot, TakenAt: time.Now().UTC()}}
		return nil
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return s.d.classify(err, s.what(e))
	}
	info := Consistency{Mode: ConsistencySnapshot}
	// The transaction sits idle between the plan's queries: a server's idle timeout would end
	// it, and the snapshot with it, under the chunks still to import it.
	_, err = tx.ExecContext(ctx, "SET LOCAL idle_in_transaction_session_timeout = 0; SET LOCAL application_name = "+quoteLiteral(pgSnapshotApp))
	if err == nil {
		err = tx.QueryRowContext(ctx, "SELECT pg_export_snapshot(), pg_current_snapshot()::text, statement_timestamp()").
			Scan(&info.Snapshot, &info.PGSnapshot, &info.TakenAt)
	}
	if err != nil {
		_ = tx.Rollback()
		return s.d.classify(err, s.what(e))
	}
	info.TakenAt = info.TakenAt.UTC()
	s.snap = &snapTx{tx: tx, info: info}
	return nil
}

// endSnapshot ends the run's snapshot transaction (it wrote nothing: a rollback).
func (s *source) endSnapshot() {
	if s.snap != nil {
		_ = s.snap.tx.Rollback()
		s.snap = nil
	}
}

// inPgSnapshot runs read on pc inside a transaction that imports the run's snapshot, or
// as it is when the run has none.
func (s *source) inPgSnapshot(ctx context.Context, pc *pgx.Conn, e *Export, read func() error) error {
	if s.snap == nil {
		return read()
	}
	tx, err := pc.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return s.d.classify(err, s.what(e))
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // read only: nothing to commit
	if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT "+quoteLiteral(s.snap.info.Snapshot)); err != nil {
		return s.d.classify(fmt.Errorf("importing the run's snapshot %s: %w", s.snap.info.Snapshot, err), s.what(e))
	}
	// The snapshot's transaction holds ACCESS SHARE on what the plan read: an ALTER, DROP or
	// TRUNCATE of it waits for the run, and a chunk's read queued behind that request would
	// wait for ever (as pg_dump -j's workers would, which ask with NOWAIT). A chunk waits for a
	// lock only so long, to let a request with its own lock_timeout give up first.
	if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = "+quoteLiteral(snapshotLockTimeout.String())); err != nil {
		return s.d.classify(err, s.what(e))
	}
	err = read()
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "55P03" { // lock_not_available
		return fmt.Errorf("%w (a chunk waited %s for a lock queued behind another session's ALTER, DROP, TRUNCATE or LOCK of the table, "+
			"which waits for this run's snapshot to end: run again when it is done, or with consistency: chunk)", err, snapshotLockTimeout)
	}
	return err
}

// snapshotLockTimeout is how long a chunk of a snapshot run waits for a lock.
const snapshotLockTimeout = 10 * time.Second

// openSnapshot takes the run's snapshot when its export asks for one.
func (r *runner) openSnapshot(ctx context.Context) error {
	if r.e.Consistency != ConsistencySnapshot {
		return nil
	}
	if err := r.src.beginSnapshot(ctx, r.e); err != nil {
		return err
	}
	r.o.log().Debug("export: reading from one snapshot", "export", r.e.Name, "run_id", r.rec.RunID,
		"snapshot", r.src.snap.info.Snapshot, "pg_snapshot", r.src.snap.info.PGSnapshot)
	return nil
}

// consistency is what the manifest says of the state the parts were read from: a snapshot
// only when every part was read from this run's one snapshot.
func (r *runner) consistency() *Consistency {
	if r.e.Consistency == ConsistencyChunk || r.src == nil || r.src.snap == nil {
		return &Consistency{Mode: ConsistencyChunk, Requested: requested(r.e.Consistency, ConsistencyChunk)}
	}
	if r.planInherited {
		return &Consistency{Mode: ConsistencyChunk, Requested: ConsistencySnapshot}
	}
	c := r.src.snap.info
	return &c
}

func requested(want, got ConsistencyMode) ConsistencyMode {
	if want == got {
		return ""
	}
	return want
}
