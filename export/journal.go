package export

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Journal is the state file: the run journal, per-chunk progress and the delta cursors, in one
// SQLite database. It is safe for concurrent use by the goroutines of one process.
type Journal struct {
	db   *sql.DB
	path string
}

// RunRecord is one run in the journal.
type RunRecord struct {
	RunID      string        `json:"run_id"`
	Export     string        `json:"export"`
	Status     string        `json:"status"`
	Error      string        `json:"error,omitempty"`
	Prefix     string        `json:"prefix"` // the resolved destination URL
	Rows       int64         `json:"rows"`
	Parts      int           `json:"parts"`
	Bytes      int64         `json:"bytes"`
	Attempts   int           `json:"attempts"`
	StartedAt  time.Time     `json:"started_at"`
	FinishedAt time.Time     `json:"finished_at,omitzero"`
	Window     *CursorWindow `json:"cursor,omitempty"`
	// The run's last verification, nil when none is recorded (its fields are then left out
	// of the JSON).
	*Verification
}

// Verification is a check of a run's output made after the run (RecordVerification): when,
// by which command, its verdict and the figures it rests on.
type Verification struct {
	At     time.Time `json:"verified_at"`     // UTC, when the check ended
	By     string    `json:"verified_by"`     // VerifiedByReconcile, VerifiedByValidate or VerifiedByValidateDeep
	Result string    `json:"verified_result"` // "match", "mismatch", "unknown"; "certified", "not_certified"
	Detail string    `json:"verified_detail"` // the figures: "4 chunks: 3 match, 1 mismatch, 0 unknown"
}

// What a Verification was made by.
const (
	VerifiedByReconcile    = "reconcile"
	VerifiedByValidate     = "validate"
	VerifiedByValidateDeep = "validate --deep"
)

// ChunkRecord is one chunk of a run: its range and, once committed, its part.
type ChunkRecord struct {
	Index  int
	Range  Range
	Status string // "pending", "running", "committed"
	Part   Part   // set when committed
}

const schemaSQL = `
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, export TEXT NOT NULL, status TEXT NOT NULL, error TEXT NOT NULL DEFAULT '',
  prefix TEXT NOT NULL, rows INTEGER NOT NULL DEFAULT 0, parts INTEGER NOT NULL DEFAULT 0,
  bytes INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 1,
  started_at TEXT NOT NULL, finished_at TEXT NOT NULL DEFAULT '', cursor_window TEXT NOT NULL DEFAULT 'null');
CREATE INDEX IF NOT EXISTS runs_export ON runs(export, started_at);
CREATE TABLE IF NOT EXISTS chunks (
  run_id TEXT NOT NULL, idx INTEGER NOT NULL, range TEXT NOT NULL, status TEXT NOT NULL,
  part TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (run_id, idx));
CREATE TABLE IF NOT EXISTS plans (
  run_id TEXT PRIMARY KEY, complete INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS run_schemas (
  run_id TEXT PRIMARY KEY, columns TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS run_definitions (
  run_id TEXT PRIMARY KEY, definition TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS verifications (
  run_id TEXT PRIMARY KEY, verified_at TEXT NOT NULL, verified_by TEXT NOT NULL, result TEXT NOT NULL,
  detail TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cursors (
  export TEXT PRIMARY KEY, column_name TEXT NOT NULL, value TEXT NOT NULL, run_id TEXT NOT NULL,
  updated_at TEXT NOT NULL);`

// OpenJournal opens (creating it and its directory when absent) the state file at path. The
// schema only ever grows by tables: a state file written before a table existed gets it
// here, empty, and an older wharf ignores the tables it does not know.
func OpenJournal(ctx context.Context, path string) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, newErr("state", path, ErrState, err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		return nil, newErr("state", path, ErrState, err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, schemaSQL); err != nil {
		db.Close()
		return nil, newErr("state", path, ErrState, err)
	}
	return &Journal{db: db, path: path}, nil
}

// Close closes the state file.
func (j *Journal) Close() error { return j.db.Close() }

func (j *Journal) fail(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if strings.Contains(err.Error(), "disk is full") { // SQLITE_FULL
		err = fmt.Errorf("%w: no space left on %s", err, describeDisk(filepath.Dir(j.path)))
	}
	return newErr("state", j.path, ErrState, err)
}

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only types of this package, which always marshal
	}
	return string(b)
}

// StartRun records r as running, or, for a run already journaled (a resume), marks it running
// again, counts the attempt and forgets its last verification, which was of the output the
// resume now changes.
func (j *Journal) StartRun(ctx context.Context, r *RunRecord) error {
	tx, err := j.db.BeginTx(ctx, nil)
	if err != nil {
		return j.fail(err)
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `INSERT INTO runs (run_id, export, status, prefix, started_at, cursor_window)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT(run_id) DO UPDATE SET status = excluded.status, error = '', attempts = attempts + 1, finished_at = ''`,
		r.RunID, r.Export, StatusRunning, r.Prefix, ts(r.StartedAt), mustJSON(r.Window))
	if err != nil {
		return j.fail(err)
	}
	if _, err = tx.ExecContext(ctx, `DELETE FROM verifications WHERE run_id = ?`, r.RunID); err != nil {
		return j.fail(err)
	}
	return j.fail(tx.Commit())
}

// AbandonRuns marks the export's runs still recorded running, but for keep, abandoned: a
// process that was killed never finished them, and a later run is starting. (A run of the
// export still going on in another process is recorded again when it finishes.)
func (j *Journal) AbandonRuns(ctx context.Context, export, keep string) error {
	_, err := j.db.ExecContext(ctx, `UPDATE runs SET status = ?, error = ? WHERE export = ? AND status = ? AND run_id <> ?`,
		StatusAbandoned, "never finished (its process was stopped) before a later run of the export started",
		export, StatusRunning, keep)
	return j.fail(err)
}

// FinishRun records the outcome of r. A succeeded delta run advances the export's cursor in
// the same transaction; a failed one leaves it where it was.
func (j *Journal) FinishRun(ctx context.Context, r *RunRecord) error {
	tx, err := j.db.BeginTx(ctx, nil)
	if err != nil {
		return j.fail(err)
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, rows = ?, parts = ?, bytes = ?, finished_at = ?
WHERE run_id = ?`, r.Status, r.Error, r.Rows, r.Parts, r.Bytes, ts(r.FinishedAt), r.RunID)
	if err != nil {
		return j.fail(err)
	}
	if r.Status == StatusSucceeded && r.Window != nil && !r.Window.To.IsZero() {
		_, err = tx.ExecContext(ctx, `INSERT INTO cursors (export, column_name, value, run_id, updated_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT(export) DO UPDATE SET column_name = excluded.column_name, value = excluded.value,
  run_id = excluded.run_id, updated_at = excluded.updated_at`,
			r.Export, r.Window.Column, mustJSON(r.Window.To), r.RunID, ts(r.FinishedAt))
		if err != nil {
			return j.fail(err)
		}
	}
	return j.fail(tx.Commit())
}

// runCols are a run's columns, with its verification's (NULL when none), from
// runsFrom.
const runCols = `runs.run_id, export, status, error, prefix, rows, parts, bytes, attempts, started_at,
finished_at, cursor_window, v.verified_at, v.verified_by, v.result, v.detail`

const runsFrom = ` FROM runs LEFT JOIN verifications v ON v.run_id = runs.run_id `

func scanRun(sc interface{ Scan(...any) error }) (*RunRecord, error) {
	var r RunRecord
	var started, finished, window string
	var vAt, vBy, vResult, vDetail sql.NullString
	err := sc.Scan(&r.RunID, &r.Export, &r.Status, &r.Error, &r.Prefix, &r.Rows, &r.Parts, &r.Bytes,
		&r.Attempts, &started, &finished, &window, &vAt, &vBy, &vResult, &vDetail)
	if err != nil {
		return nil, err
	}
	r.StartedAt, _ = time.Parse(time.RFC3339Nano, started)
	r.FinishedAt, _ = time.Parse(time.RFC3339Nano, finished)
	if err := json.Unmarshal([]byte(window), &r.Window); err != nil {
		return nil, err
	}
	if vAt.Valid {
		r.Verification = &Verification{By: vBy.String, Result: vResult.String, Detail: vDetail.String}
		r.Verification.At, _ = time.Parse(time.RFC3339Nano, vAt.String)
	}
	return &r, nil
}

// RecordVerification records v as the last verification of the export's run runID,
// replacing the one recorded before. It reports whether the journal holds that run: a run
// it does not hold (a prefix exported with another state file) records nothing.
func (j *Journal) RecordVerification(ctx context.Context, export, runID string, v Verification) (bool, error) {
	res, err := j.db.ExecContext(ctx, `INSERT INTO verifications (run_id, verified_at, verified_by, result, detail)
SELECT run_id, ?, ?, ?, ? FROM runs WHERE run_id = ? AND export = ?
ON CONFLICT(run_id) DO UPDATE SET verified_at = excluded.verified_at, verified_by = excluded.verified_by,
  result = excluded.result, detail = excluded.detail`,
		ts(v.At), v.By, v.Result, v.Detail, runID, export)
	if err != nil {
		return false, j.fail(err)
	}
	n, err := res.RowsAffected()
	return n > 0, j.fail(err)
}

// LastRun returns the export's most recently started run, or nil when it has none.
func (j *Journal) LastRun(ctx context.Context, export string) (*RunRecord, error) {
	row := j.db.QueryRowContext(ctx, `SELECT `+runCols+runsFrom+`WHERE export = ? ORDER BY started_at DESC, runs.rowid DESC LIMIT 1`, export)
	r, err := scanRun(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, j.fail(err)
}

// Runs returns the runs of export (every export when ""), newest first, at most limit (0: all).
func (j *Journal) Runs(ctx context.Context, export string, limit int) ([]RunRecord, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := j.db.QueryContext(ctx, `SELECT `+runCols+runsFrom+`WHERE ? = '' OR export = ?
ORDER BY started_at DESC, runs.rowid DESC LIMIT ?`, export, export, limit)
	if err != nil {
		return nil, j.fail(err)
	}
	defer rows.Close()
	var out []RunRecord
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, j.fail(err)
		}
		out = append(out, *r)
	}
	return out, j.fail(rows.Err())
}

// Cursor returns the export's delta cursor: the upper bound of its last successful run.
func (j *Journal) Cursor(ctx context.Context, export string) (Bound, error) {
	var v string
	err := j.db.QueryRowContext(ctx, `SELECT value FROM cursors WHERE export = ?`, export).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return Bound{}, nil
	}
	if err != nil {
		return Bound{}, j.fail(err)
	}
	var b Bound
	return b, j.fail(json.Unmarshal([]byte(v), &b))
}

// BeginPlan records that the plan of a run is being made: its chunks are added one at a
// time with AddChunk, and EndPlan marks it whole.
func (j *Journal) BeginPlan(ctx context.Context, runID string) error {
	_, err := j.db.ExecContext(ctx, `INSERT INTO plans (run_id, complete) VALUES (?, 0) ON CONFLICT (run_id) DO NOTHING`, runID)
	return j.fail(err)
}

// AddChunk records chunk idx of a run's plan as pending.
func (j *Journal) AddChunk(ctx context.Context, runID string, idx int, r Range) error {
	_, err := j.db.ExecContext(ctx, `INSERT INTO chunks (run_id, idx, range, status) VALUES (?, ?, ?, 'pending')`,
		runID, idx, mustJSON(r))
	return j.fail(err)
}

// EndPlan records that every chunk of a run's plan has been added.
func (j *Journal) EndPlan(ctx context.Context, runID string) error {
	_, err := j.db.ExecContext(ctx, `INSERT INTO plans (run_id, complete) VALUES (?, 1)
  ON CONFLICT (run_id) DO UPDATE SET complete = 1`, runID)
	return j.fail(err)
}

// PlanComplete reports whether a run's plan was made whole. A run journaled before plans
// were made incrementally has no plans row: its chunks were saved all at once, so it is
// complete if it has any.
func (j *Journal) PlanComplete(ctx context.Context, runID string) (bool, error) {
	var complete int
	err := j.db.QueryRowContext(ctx, `SELECT complete FROM plans WHERE run_id = ?`, runID).Scan(&complete)
	if errors.Is(err, sql.ErrNoRows) {
		var n int
		err = j.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM chunks WHERE run_id = ?`, runID).Scan(&n)
		return n > 0, j.fail(err)
	}
	return complete == 1, j.fail(err)
}

// Chunks returns the chunks of a run in order.
func (j *Journal) Chunks(ctx context.Context, runID string) ([]ChunkRecord, error) {
	rows, err := j.db.QueryContext(ctx, `SELECT idx, range, status, part FROM chunks WHERE run_id = ? ORDER BY idx`, runID)
	if err != nil {
		return nil, j.fail(err)
	}
	defer rows.Close()
	var out []ChunkRecord
	for rows.Next() {
		var c ChunkRecord
		var rg, part string
		if err := rows.Scan(&c.Index, &rg, &c.Status, &part); err != nil {
			return nil, j.fail(err)
		}
		if err := json.Unmarshal([]byte(rg), &c.Range); err != nil {
			return nil, j.fail(err)
		}
		if err := json.Unmarshal([]byte(part), &c.Part); err != nil {
			return nil, j.fail(err)
		}
		out = append(out, c)
	}
	return out, j.fail(rows.Err())
}

// SetChunk records a chunk's status, and its part once committed.
func (j *Journal) SetChunk(ctx context.Context, runID string, idx int, status string, p *Part) error {
	part := "{}"
	if p != nil {
		part = mustJSON(p)
	}
	_, err := j.db.ExecContext(ctx, `UPDATE chunks SET status = ?, part = ? WHERE run_id = ? AND idx = ?`, status, part, runID, idx)
	return j.fail(err)
}

// updateWindow records the delta window a run exports, so that a resume keeps it.
func (j *Journal) updateWindow(ctx context.Context, runID string, w *CursorWindow) error {
	_, err := j.db.ExecContext(ctx, `UPDATE runs SET cursor_window = ? WHERE run_id = ?`, mustJSON(w), runID)
	return j.fail(err)
}

// SetRunSchema records the columns a run writes its parts with, so that a resume of the run
// writes the same.
func (j *Journal) SetRunSchema(ctx context.Context, runID string, cols []SchemaColumn) error {
	_, err := j.db.ExecContext(ctx, `INSERT INTO run_schemas (run_id, columns) VALUES (?, ?)
  ON CONFLICT (run_id) DO UPDATE SET columns = excluded.columns`, runID, mustJSON(cols))
	return j.fail(err)
}

// RunSchema returns the columns a run writes its parts with, or nil when none are recorded.
func (j *Journal) RunSchema(ctx context.Context, runID string) ([]SchemaColumn, error) {
	var v string
	err := j.db.QueryRowContext(ctx, `SELECT columns FROM run_schemas WHERE run_id = ?`, runID).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, j.fail(err)
	}
	var cols []SchemaColumn
	return cols, j.fail(json.Unmarshal([]byte(v), &cols))
}

// SetRunDefinition records the definition a run was started with; a resume of the run keeps
// the first one recorded.
func (j *Journal) SetRunDefinition(ctx context.Context, runID string, d Definition) error {
	_, err := j.db.ExecContext(ctx, `INSERT INTO run_definitions (run_id, definition) VALUES (?, ?)
  ON CONFLICT (run_id) DO NOTHING`, runID, mustJSON(d))
	return j.fail(err)
}

// RunDefinition returns the definition a run was started with, or nil when none is recorded.
func (j *Journal) RunDefinition(ctx context.Context, runID string) (*Definition, error) {
	var v string
	err := j.db.QueryRowContext(ctx, `SELECT definition FROM run_definitions WHERE run_id = ?`, runID).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, j.fail(err)
	}
	var d Definition
	return &d, j.fail(json.Unmarshal([]byte(v), &d))
}
