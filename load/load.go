package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// Options say what to load, and where.
type Options struct {
	Export string        // the export whose run is loaded: the manifest must name it
	Prefix string        // the URL of the run's prefix
	Store  *store.Config // the prefix's store options
	Target Target        // where to (Check fills its defaults)
	Deep   bool          // re-read and decode every part before the load (validate --deep)
	Force  bool          // load a run the ledger would refuse (older, or another manifest)
	// Getenv reads the environment for the password's env:// reference; nil reads nothing.
	Getenv func(string) string
	// TempDir holds each part while its rows are copied ("" is os.TempDir).
	TempDir string
	// Progress, when set, is called after each part is copied.
	Progress func(Progress)
	Logger   *slog.Logger // nil discards
}

// Progress is a load's progress after a part.
type Progress struct {
	Parts, PartsDone int
	Rows, Bytes      int64
}

// Result is what Run did. Its JSON is the stable schema of `wharf load --format json`
// (fields are only ever added).
type Result struct {
	Prefix         string `json:"prefix"`
	Export         string `json:"export"`
	RunID          string `json:"run_id"`
	ManifestSHA256 string `json:"manifest_sha256"`
	Table          string `json:"table"`
	Mode           Mode   `json:"mode"`
	// Loaded is false when the ledger already recorded this run, with this manifest, as
	// loaded into the table: nothing was done (Note says when it was loaded).
	Loaded     bool   `json:"loaded"`
	Created    bool   `json:"created"` // the table did not exist and was created
	Rows       int64  `json:"rows"`
	Parts      int    `json:"parts"`
	Bytes      int64  `json:"bytes"`
	DurationMS int64  `json:"duration_ms"`
	Note       string `json:"note,omitempty"`
}

// RecordColumn is the one column, of type jsonb, a dataset of records (a backfill's store
// sink) is loaded into: one row a record.
const RecordColumn = "record"

// column is one column loaded: its name, its manifest (Arrow) type, its PostgreSQL type.
type column struct {
	name, arrow, pg string
}

// Run loads the run at o.Prefix into o.Target (see the package documentation).
func Run(ctx context.Context, o Options) (*Result, error) {
	start := time.Now()
	t := o.Target
	if err := t.Check(o.Export); err != nil {
		return nil, err
	}
	table, _ := tableName(t.Table)
	m, sum, err := certified(ctx, o)
	if err != nil {
		return nil, err
	}
	cols, err := columnsOf(o.Prefix, m, &t)
	if err != nil {
		return nil, err
	}
	tg, err := connect(ctx, &t, o.Getenv)
	if err != nil {
		return nil, err
	}
	defer tg.close()
	if len(table) == 1 { // one name for the table in the ledger and the lock, however it is given
		var schema string
		if err := tg.conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			return nil, tg.fail("read the current schema", err)
		}
		table = pgx.Identifier{schema, table[0]}
	}
	r := &Result{Prefix: o.Prefix, Export: m.Export, RunID: m.RunID, ManifestSHA256: sum,
		Table: strings.Join(table, "."), Mode: t.Mode, Parts: len(m.Parts)}
	ledger := t.ledgerName()
	if err := tg.ensureLedger(ctx, ledger); err != nil {
		return nil, err
	}
	tx, err := tg.conn.Begin(ctx)
	if err != nil {
		return nil, tg.fail("begin", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // a no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "wharf load "+r.Table); err != nil {
		return nil, tg.fail("lock "+r.Table, err)
	}
	if note, err := tg.checkLedger(ctx, tx, ledger, r, m, o.Force); err != nil || note != "" {
		r.Note = note
		r.DurationMS = time.Since(start).Milliseconds()
		return r, err
	}
	if r.Created, err = tg.ensureTable(ctx, tx, table, cols, &t); err != nil {
		return nil, err
	}
	s, err := store.Open(ctx, o.Prefix, o.Store)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	// Records with named columns are copied as they are into a staging table of one jsonb
	// column, and each column is then taken from them by PostgreSQL (project).
	copyCols, fields := cols, m.Format == dataset.FormatLines && len(t.Columns) > 0
	if fields {
		copyCols = []column{{name: RecordColumn, pg: "jsonb"}}
	}
	src := &rows{ctx: ctx, s: s, m: m, cols: copyCols, dir: o.TempDir, progress: o.Progress}
	defer src.closePart()
	into := table
	switch {
	case fields:
		into = pgx.Identifier{"wharf_load_records"}
		if err := tg.stage(ctx, tx, into, copyCols); err != nil {
			return nil, err
		}
	case t.Mode == ModeReplace:
		if err := tg.exec(ctx, tx, "truncate "+r.Table, `TRUNCATE `+table.Sanitize()); err != nil {
			return nil, err
		}
	case t.Mode == ModeMerge:
		into = pgx.Identifier{"wharf_load_stage"}
		if err := tg.stage(ctx, tx, into, cols); err != nil {
			return nil, err
		}
	}
	n, err := tg.copy(ctx, tx, into, copyCols, src)
	if err != nil {
		return nil, err
	}
	if n != m.Rows || src.rows != m.Rows {
		return nil, errcode.E("load", o.Prefix, ErrRefused, fmt.Errorf("copied %d rows, the manifest lists %d", n, m.Rows))
	}
	if fields {
		if into, err = tg.project(ctx, tx, table, into, cols, &t); err != nil {
			return nil, err
		}
	}
	if err := tg.publish(ctx, tx, table, into, cols, &t); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO `+ledger.Sanitize()+` (table_name, export, run_id, manifest_sha256, mode, rows, run_started_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (table_name, export, run_id) DO UPDATE SET manifest_sha256 = EXCLUDED.manifest_sha256,
  mode = EXCLUDED.mode, rows = EXCLUDED.rows, run_started_at = EXCLUDED.run_started_at, loaded_at = now()`,
		r.Table, m.Export, m.RunID, sum, string(t.Mode), m.Rows, m.StartedAt); err != nil {
		return nil, tg.fail("write the ledger "+ledger.Sanitize(), err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, tg.fail("commit", err)
	}
	r.Loaded, r.Rows, r.Bytes = true, n, src.bytes
	r.DurationMS = time.Since(start).Milliseconds()
	return r, nil
}

// certified returns the manifest of the certified run at o.Prefix, of o.Export, and the
// sha256 of its bytes (its _SUCCESS).
func certified(ctx context.Context, o Options) (*dataset.Manifest, string, error) {
	s, err := store.Open(ctx, o.Prefix, o.Store)
	if err != nil {
		return nil, "", errcode.E("load", o.Prefix, dataset.ErrVerifyManifestRead, err)
	}
	defer s.Close()
	v, err := dataset.Validate(ctx, s, o.Prefix, o.Deep, dataset.StoreOpener(o.Store))
	if err != nil {
		return nil, "", err
	}
	if err := v.NotCertified(); err != nil || v.LegacyRun {
		if err == nil {
			err = errors.New("a legacy run, without manifest.json")
		}
		return nil, "", errcode.E("load", o.Prefix, ErrRefused, fmt.Errorf("not a certified run: %w", err))
	}
	m := v.Manifest
	if o.Export != "" && m.Export != o.Export {
		return nil, "", errcode.E("load", o.Prefix, ErrRefused, fmt.Errorf("the run there is of export %q, not %q", m.Export, o.Export))
	}
	body, ok, err := dataset.ReadSmall(ctx, s, dataset.SuccessKey)
	if err != nil || !ok {
		return nil, "", errcode.E("load", o.Prefix, dataset.ErrVerifyManifestRead, fmt.Errorf("reading %s: %w", dataset.SuccessKey, errors.Join(err, store.ErrNotExist)))
	}
	return m, string(bytes.TrimSpace(body)), nil
}

// columnsOf maps the manifest's schema through the type table, refusing what it lacks and
// checking the merge keys.
func columnsOf(prefix string, m *dataset.Manifest, t *Target) ([]column, error) {
	switch m.Format {
	case dataset.FormatLines: // a backfill's store sink: each record a JSON value
		fs, err := t.fields()
		switch {
		case err != nil:
			return nil, errcode.E("load", prefix, ErrConfig, err)
		case len(fs) == 0 && len(t.Key) > 0:
			return nil, errcode.E("load", prefix, ErrRefused, errors.New("the dataset's records load into one jsonb column, record, which has no key to merge on: name the columns to take from the records (columns)"))
		case len(fs) == 0:
			return []column{{name: RecordColumn, pg: "jsonb"}}, nil
		}
		cols := make([]column, len(fs))
		for i, f := range fs {
			cols[i] = column{name: f.name, pg: f.pg}
		}
		return cols, nil
	case dataset.FormatParquet:
	default:
		return nil, errcode.E("load", prefix, ErrRefused, fmt.Errorf("the run's parts are %s: load reads Parquet parts, and a backfill's records", m.Format))
	}
	if len(t.Columns) > 0 {
		return nil, errcode.E("load", prefix, ErrRefused, errors.New("columns names the fields of a dataset of records, and this run's parts are Parquet: its columns are the manifest's"))
	}
	var cols []column
	var refused []string
	for _, c := range m.Schema {
		pg, ok := pgTypeOf(c.Type)
		if !ok {
			refused = append(refused, fmt.Sprintf("column %q of type %s", c.Name, c.Type))
			continue
		}
		cols = append(cols, column{name: c.Name, arrow: c.Type, pg: pg})
	}
	if len(refused) > 0 {
		return nil, errcode.E("load", prefix, ErrRefused, fmt.Errorf("no PostgreSQL type for %s (docs/export.md lists the type table)", strings.Join(refused, ", ")))
	}
	for _, k := range t.Key {
		if !slices.ContainsFunc(cols, func(c column) bool { return c.name == k }) {
			return nil, errcode.E("load", prefix, ErrRefused, fmt.Errorf("key column %q is not a column of the run", k))
		}
	}
	return cols, nil
}

func names(cols []column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.name
	}
	return out
}
