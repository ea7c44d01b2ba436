package export

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver "sqlite"
)

type sqliteDialect struct{ path string }

func (sqliteDialect) name() string     { return "sqlite" }
func (sqliteDialect) param(int) string { return "?" }

// selectExpr reads a column without its declared type (a unary + keeps the value and drops
// it), so that the driver hands over SQLite's storage classes as they are and parses nothing:
// a timestamp's text, an integer in a DATE column. wharf converts them, exactly or not at all.
func (sqliteDialect) selectExpr(col string) string { return "+" + col }

// boundExpr: a unary + keeps the stored value but drops the declared type, so the driver hands
// back the raw text of a timestamp (which compares as SQLite compares it) instead of a time.
func (sqliteDialect) boundExpr(col string) string { return "+" + col }

func (d sqliteDialect) classify(err error, what string) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "no such table"), strings.Contains(msg, "no such column"):
		return newErr("schema", what, ErrSourceNotFound, err)
	case strings.Contains(msg, "unable to open"), strings.Contains(msg, "not a database"):
		return newErr("open-source", "sqlite "+d.path, ErrSourceUnavailable, err)
	}
	return newErr("read", what, ErrSourceRead, err)
}

// sqlitePath returns the file of sqlite:///abs/path.db or sqlite://rel/path.db.
func sqlitePath(raw string) (string, error) {
	rest, ok := strings.CutPrefix(raw, "sqlite://")
	if !ok || rest == "" {
		return "", newErr("config", "source", ErrConfig, fmt.Errorf("%q: want sqlite:///path/to.db", raw))
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest = rest[:i]
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return "", newErr("config", "source", ErrConfig, err)
	}
	return filepath.Clean(p), nil
}

// openSQLite opens the database file read-only. A missing file is ErrSourceUnavailable naming
// it (SQLite would otherwise create an empty database).
func openSQLite(ctx context.Context, raw string) (*source, error) {
	path, err := sqlitePath(raw)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, newErr("open-source", "sqlite "+path, ErrSourceUnavailable, err)
	}
	dsn := "file:" + path + "?mode=ro&_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, newErr("open-source", "sqlite "+path, ErrSourceUnavailable, err)
	}
	d := sqliteDialect{path: path}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, d.classify(err, "sqlite "+path)
	}
	return &source{db: db, d: d, desc: "sqlite " + path}, nil
}
