package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/secret"
	"github.com/wharfdata/wharf/store"
)

// target is one connection to the target database.
type target struct {
	conn *pgx.Conn
	host string // host:port/db, for messages
	pw   secret.Value
}

// connect opens t's database with the password read from its reference. A password inside
// the URL is refused (store.ErrCredentialLiteral).
func connect(ctx context.Context, t *Target, getenv func(string) string) (*target, error) {
	cfg, err := pgx.ParseConfig(t.URL)
	if err != nil {
		return nil, errcode.E("config", "target", ErrConfig, errors.New("cannot parse the target URL (is it postgres://user@host:port/db?)"))
	}
	host := fmt.Sprintf("%s:%d/%s", cfg.Host, cfg.Port, cfg.Database)
	if u, err := url.Parse(t.URL); err == nil {
		if _, set := u.User.Password(); set || u.Query().Has("password") {
			return nil, &store.Error{Op: "config", Key: "password", Kind: store.ErrCredentialLiteral,
				Err: fmt.Errorf("the target URL for %s holds a password: give password: env://NAME instead", host)}
		}
	}
	pw, err := store.ResolveRef("password", t.Password, getenv)
	if err != nil {
		return nil, err
	}
	cfg.Password = pw.Reveal()
	cfg.RuntimeParams["application_name"] = "wharf load"
	tg := &target{host: host, pw: pw}
	if tg.conn, err = pgx.ConnectConfig(ctx, cfg); err != nil {
		return nil, tg.fail("connect", err)
	}
	return tg, nil
}

func (tg *target) close() { _ = tg.conn.Close(context.Background()) }

// fail wraps a failure of step as ErrTarget. The password is scrubbed from the message, should a driver ever echo it.
func (tg *target) fail(step string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if pw := tg.pw.Reveal(); pw != "" && strings.Contains(err.Error(), pw) {
		err = errors.New(strings.ReplaceAll(err.Error(), pw, secret.Redacted))
	}
	return errcode.E("load", "postgres "+tg.host+": "+step, ErrTarget, err)
}

// ensureLedger creates the ledger when it is missing, in a transaction of its own.
func (tg *target) ensureLedger(ctx context.Context, ledger pgx.Identifier) error {
	return pgx.BeginFunc(ctx, tg.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('wharf load ledger', 0))`); err != nil {
			return tg.fail("lock the ledger", err)
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+ledger.Sanitize()+` (
  table_name text NOT NULL,
  export text NOT NULL,
  run_id text NOT NULL,
  manifest_sha256 text NOT NULL,
  mode text NOT NULL,
  rows bigint NOT NULL,
  run_started_at timestamptz NOT NULL,
  loaded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (table_name, export, run_id))`)
		if err != nil {
			return tg.fail("create the ledger "+ledger.Sanitize(), err)
		}
		return nil
	})
}

// checkLedger decides from the ledger whether the run is loaded: ErrRefused when a newer run
// of the export is loaded into the table, or this run was with another manifest (unless
// force); a note (and no error) when it was loaded already, with this manifest.
func (tg *target) checkLedger(ctx context.Context, tx pgx.Tx, ledger pgx.Identifier, r *Result, m *dataset.Manifest, force bool) (string, error) {
	if force {
		return "", nil
	}
	var newer string
	err := tx.QueryRow(ctx, `SELECT run_id FROM `+ledger.Sanitize()+`
WHERE table_name = $1 AND export = $2 AND run_started_at > $3 ORDER BY run_started_at DESC LIMIT 1`, r.Table, m.Export, m.StartedAt).Scan(&newer)
	switch {
	case err == nil:
		return "", errcode.E("load", r.Prefix, ErrRefused, fmt.Errorf("run %s started before run %s, which is loaded into %s already: give --force to load the older run", m.RunID, newer, r.Table))
	case !errors.Is(err, pgx.ErrNoRows):
		return "", tg.fail("read the ledger", err)
	}
	// A run is loaded already when the ledger has it. For replace, only when it is also the
	// last load of the table: after another run replaced it (a forced older run, another
	// export) the table no longer holds it, whatever the ledger remembers of it.
	q := `SELECT manifest_sha256, to_char(loaded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM ` + ledger.Sanitize() + `
WHERE table_name = $1 AND export = $2 AND run_id = $3`
	if r.Mode == ModeReplace {
		q = `SELECT manifest_sha256, at FROM (SELECT export, run_id, manifest_sha256,
  to_char(loaded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS at FROM ` + ledger.Sanitize() + `
  WHERE table_name = $1 ORDER BY loaded_at DESC LIMIT 1) last WHERE export = $2 AND run_id = $3`
	}
	var sha, at string
	err = tx.QueryRow(ctx, q, r.Table, m.Export, m.RunID).Scan(&sha, &at)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", nil
	case err != nil:
		return "", tg.fail("read the ledger", err)
	case sha == r.ManifestSHA256:
		return fmt.Sprintf("run %s was loaded into %s at %s: nothing to do", m.RunID, r.Table, at), nil
	}
	return "", errcode.E("load", r.Prefix, ErrRefused, fmt.Errorf("run %s was loaded into %s at %s with manifest sha256 %s, and its manifest is now %s: give --force to load it again",
		m.RunID, r.Table, at, sha, r.ManifestSHA256))
}

// ensureTable creates the table when it is missing (reporting true), or checks that it has
// every column with the type the type table gives.
func (tg *target) ensureTable(ctx context.Context, tx pgx.Tx, table pgx.Identifier, cols []column, t *Target) (bool, error) {
	var reg *string
	if err := tx.QueryRow(ctx, `SELECT to_regclass($1)::text`, table.Sanitize()).Scan(&reg); err != nil {
		return false, tg.fail("look up "+table.Sanitize(), err)
	}
	if reg == nil {
		defs := columnDefs(cols)
		if len(t.Key) > 0 {
			defs = append(defs, "PRIMARY KEY ("+idents(t.Key)+")")
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE `+table.Sanitize()+` (`+strings.Join(defs, ", ")+`)`); err != nil {
			return false, tg.fail("create "+table.Sanitize(), err)
		}
		return true, nil
	}
	rows, err := tx.Query(ctx, `SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`, table.Sanitize())
	if err != nil {
		return false, tg.fail("read the columns of "+table.Sanitize(), err)
	}
	have := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return false, tg.fail("read the columns of "+table.Sanitize(), err)
		}
		have[name] = typ
	}
	if err := rows.Err(); err != nil {
		return false, tg.fail("read the columns of "+table.Sanitize(), err)
	}
	var wrong []string
	for _, c := range cols {
		switch typ, ok := have[c.name]; {
		case !ok:
			wrong = append(wrong, fmt.Sprintf("column %q is missing (want %s)", c.name, c.pg))
		case typ != c.pg:
			wrong = append(wrong, fmt.Sprintf("column %q is %s, the run's is %s", c.name, typ, c.pg))
		}
	}
	if len(wrong) > 0 {
		return false, errcode.E("load", table.Sanitize(), ErrRefused, fmt.Errorf("the table does not fit the run: %s", strings.Join(wrong, "; ")))
	}
	return false, nil
}

// copy streams src's rows into table into with one COPY FROM STDIN (FORMAT binary), and returns
// how many PostgreSQL took. A failure of src (a part that changed, a column of another type)
// is returned as it is, and aborts the COPY.
func (tg *target) copy(ctx context.Context, tx pgx.Tx, into pgx.Identifier, cols []column, src *rows) (int64, error) {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := src.stream(pw)
		pw.CloseWithError(err) // nil: the reader sees the end
		done <- err
	}()
	tag, err := tx.Conn().PgConn().CopyFrom(ctx, pr, `COPY `+into.Sanitize()+` (`+idents(names(cols))+`) FROM STDIN (FORMAT binary)`)
	pr.CloseWithError(errCopyEnded) // a stream still writing stops
	if serr := <-done; serr != nil && !errors.Is(serr, errCopyEnded) {
		return 0, serr
	}
	if err != nil {
		return 0, tg.fail("copy into "+into.Sanitize(), err)
	}
	return tag.RowsAffected(), nil
}

var errCopyEnded = errors.New("the COPY ended")

// stage creates the temporary staging table, dropped at the commit.
func (tg *target) stage(ctx context.Context, tx pgx.Tx, stage pgx.Identifier, cols []column) error {
	_, err := tx.Exec(ctx, `CREATE TEMPORARY TABLE `+stage.Sanitize()+` (`+strings.Join(columnDefs(cols), ", ")+`) ON COMMIT DROP`)
	if err != nil {
		return tg.fail("create the staging table", err)
	}
	return nil
}

// exec runs one statement of step.
func (tg *target) exec(ctx context.Context, tx pgx.Tx, step, q string) error {
	if _, err := tx.Exec(ctx, q); err != nil {
		return tg.fail(step, err)
	}
	return nil
}

// project takes cols from the records staged in records (one jsonb column): each record must
// be a JSON object, and each column is its field of the column's name, cast to the column's
// type (jsonb: the JSON value; a missing field or JSON null is NULL). Replace and append put
// the rows into table; merge into a staging table, which it returns, for publish.
func (tg *target) project(ctx context.Context, tx pgx.Tx, table, records pgx.Identifier, cols []column, t *Target) (pgx.Identifier, error) {
	var bad string
	err := tx.QueryRow(ctx, `SELECT left(record::text, 200) FROM `+records.Sanitize()+` WHERE jsonb_typeof(record) <> 'object' LIMIT 1`).Scan(&bad)
	switch {
	case err == nil:
		return nil, errcode.E("load", table.Sanitize(), ErrRefused, fmt.Errorf("a record is not a JSON object, so it has no fields to take the columns from: %s", bad))
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, tg.fail("look for records that are not objects", err)
	}
	exprs := make([]string, len(cols))
	for i, c := range cols {
		lit := pgx.Identifier{c.name}.Sanitize()
		lit = "'" + strings.ReplaceAll(lit[1:len(lit)-1], "'", "''") + "'" // the field's name, as a string literal
		if c.pg == "jsonb" {
			exprs[i] = "record -> " + lit
		} else {
			exprs[i] = "(record ->> " + lit + ")::" + c.pg
		}
		exprs[i] += " AS " + pgx.Identifier{c.name}.Sanitize()
	}
	sel := `SELECT ` + strings.Join(exprs, ", ") + ` FROM ` + records.Sanitize()
	switch t.Mode {
	case ModeMerge:
		stage := pgx.Identifier{"wharf_load_stage"}
		return stage, tg.exec(ctx, tx, "take the columns from the records", `CREATE TEMPORARY TABLE `+stage.Sanitize()+` ON COMMIT DROP AS `+sel)
	case ModeReplace:
		if err := tg.exec(ctx, tx, "truncate "+table.Sanitize(), `TRUNCATE `+table.Sanitize()); err != nil {
			return nil, err
		}
	}
	return table, tg.exec(ctx, tx, "insert into "+table.Sanitize(), `INSERT INTO `+table.Sanitize()+` (`+idents(names(cols))+`) `+sel)
}

// publish merges the staged rows into the table (replace and append copied them there).
func (tg *target) publish(ctx context.Context, tx pgx.Tx, table, stage pgx.Identifier, cols []column, t *Target) error {
	if t.Mode != ModeMerge {
		return nil
	}
	var on, set, vals []string
	for _, c := range cols {
		id := pgx.Identifier{c.name}.Sanitize()
		vals = append(vals, "s."+id)
		if slices.Contains(t.Key, c.name) {
			on = append(on, "t."+id+" = s."+id)
		} else {
			set = append(set, id+" = s."+id)
		}
	}
	keys := idents(t.Key)
	var dup string
	err := tx.QueryRow(ctx, `SELECT row(`+keys+`)::text FROM `+stage.Sanitize()+` GROUP BY `+keys+` HAVING count(*) > 1 LIMIT 1`).Scan(&dup)
	switch {
	case err == nil:
		return errcode.E("load", table.Sanitize(), ErrRefused, fmt.Errorf("the run holds two rows with one key: (%s) = %s", strings.Join(t.Key, ", "), dup))
	case !errors.Is(err, pgx.ErrNoRows):
		return tg.fail("look for keys given twice", err)
	}
	matched := "DO NOTHING"
	if len(set) > 0 {
		matched = "UPDATE SET " + strings.Join(set, ", ")
	}
	return tg.exec(ctx, tx, "merge into "+table.Sanitize(), `MERGE INTO `+table.Sanitize()+` AS t USING `+stage.Sanitize()+` AS s ON `+
		strings.Join(on, " AND ")+` WHEN MATCHED THEN `+matched+` WHEN NOT MATCHED THEN INSERT (`+idents(names(cols))+`) VALUES (`+strings.Join(vals, ", ")+`)`)
}

func columnDefs(cols []column) []string {
	defs := make([]string, len(cols))
	for i, c := range cols {
		defs[i] = pgx.Identifier{c.name}.Sanitize() + " " + c.pg
	}
	return defs
}

func idents(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = pgx.Identifier{n}.Sanitize()
	}
	return strings.Join(out, ", ")
}
