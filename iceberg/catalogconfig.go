package iceberg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver "sqlite"

	"github.com/wharfdata/wharf/internal/secret"
	"github.com/wharfdata/wharf/store"
)

// CatalogConfig is a catalog: section (of an export's or ship's iceberg:): the SQL catalog
// that keeps a job's tables instead of the bucket (Catalog).
type CatalogConfig struct {
	// URI is the database: postgres://user@host:port/db (a password is never part of it:
	// give it as a reference in Password), or sqlite:///path/catalog.db (made when missing).
	URI      string `yaml:"uri"`
	Password string `yaml:"password" secret:"ref"` // env://NAME or file:///path; postgres only
	// Name is the catalog's name, its catalog_name column (default DefaultCatalogName).
	Name string `yaml:"name"`
}

// DefaultCatalogName is a catalog's name when its config gives none.
const DefaultCatalogName = "wharf"

// Check validates c; field prefixes the keys it names ("iceberg.catalog").
func (c *CatalogConfig) Check(field string) error {
	switch {
	case strings.HasPrefix(c.URI, "sqlite://"):
		if c.Password != "" {
			return fmt.Errorf("%s.password: a SQLite catalog has no password", field)
		}
		if _, err := sqliteFile(c.URI); err != nil {
			return fmt.Errorf("%s.uri: %w", field, err)
		}
	case strings.HasPrefix(c.URI, "postgres://"), strings.HasPrefix(c.URI, "postgresql://"):
	default:
		return fmt.Errorf("%s.uri %q: want postgres://user@host:port/db or sqlite:///path/catalog.db", field, redact(c.URI))
	}
	if len(c.Name) > 255 || strings.ContainsAny(c.Name, "\x00\n") {
		return fmt.Errorf("%s.name %q: want at most 255 characters, on one line", field, c.Name)
	}
	return nil
}

// Rebase makes a relative SQLite path (sqlite://./catalog.db) relative to dir, the directory
// of the config file that gave it.
func (c *CatalogConfig) Rebase(dir string) {
	if rest, ok := strings.CutPrefix(c.URI, "sqlite://"); ok && rest != "" && !strings.HasPrefix(rest, "/") {
		c.URI = "sqlite://" + filepath.ToSlash(filepath.Join(dir, rest))
	}
}

// redact drops a URL's user info, for messages.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = nil
		return u.String()
	}
	return raw
}

// sqliteFile is the path of sqlite:///abs/path.db or sqlite://rel/path.db.
func sqliteFile(raw string) (string, error) {
	rest, _ := strings.CutPrefix(raw, "sqlite://")
	rest, _, _ = strings.Cut(rest, "?")
	p, err := url.PathUnescape(rest)
	if err != nil || p == "" {
		return "", fmt.Errorf("%q: want sqlite:///path/catalog.db", raw)
	}
	return filepath.Clean(p), nil
}

// OpenCatalog opens the database of c (the password read from its reference with getenv) and
// its catalog, whose tables are made when missing; Close closes the database.
func OpenCatalog(ctx context.Context, c *CatalogConfig, getenv func(string) string) (*Catalog, error) {
	if err := c.Check("catalog"); err != nil {
		return nil, &store.Error{Op: "config", Key: "catalog", Kind: store.ErrConfig, Err: err}
	}
	name := c.Name
	if name == "" {
		name = DefaultCatalogName
	}
	var db *sql.DB
	var pw secret.Value
	dialect, where := Postgres, ""
	if strings.HasPrefix(c.URI, "sqlite://") {
		path, _ := sqliteFile(c.URI)
		var err error
		if db, err = sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_txlock=immediate"); err != nil {
			return nil, err
		}
		dialect, where = SQLite, "sqlite "+path
	} else {
		pc, err := pgx.ParseConfig(c.URI)
		if err != nil {
			return nil, &store.Error{Op: "config", Key: "catalog.uri", Kind: store.ErrConfig,
				Err: errors.New("cannot parse the catalog's URL (is it postgres://user@host:port/db?)")}
		}
		host := fmt.Sprintf("%s:%d/%s", pc.Host, pc.Port, pc.Database)
		if u, err := url.Parse(c.URI); err == nil {
			if _, set := u.User.Password(); set || u.Query().Has("password") {
				return nil, &store.Error{Op: "config", Key: "catalog.password", Kind: store.ErrCredentialLiteral,
					Err: fmt.Errorf("the catalog URL for %s holds a password: give password: env://NAME instead", host)}
			}
		}
		if pw, err = store.ResolveRef("catalog.password", c.Password, getenv); err != nil {
			return nil, err
		}
		pc.Password = pw.Reveal()
		pc.RuntimeParams["application_name"] = "wharf iceberg catalog"
		db, where = stdlib.OpenDB(*pc), "postgres "+host
		db.SetMaxOpenConns(2)
	}
	cat, err := NewCatalog(ctx, db, dialect, name)
	if err != nil {
		db.Close()
		return nil, scrub(fmt.Errorf("%s: %w", where, err), pw)
	}
	cat.pw, cat.owned, cat.where = pw, true, where
	return cat, nil
}

// Close closes the catalog's database when OpenCatalog opened it.
func (c *Catalog) Close() error {
	if c == nil || !c.owned {
		return nil
	}
	return c.db.Close()
}

// Scrub keeps the catalog's password out of err's message, should a driver ever echo it.
func (c *Catalog) Scrub(err error) error {
	if c == nil {
		return err
	}
	return scrub(err, c.pw)
}

func scrub(err error, pw secret.Value) error {
	if p := pw.Reveal(); err != nil && p != "" && strings.Contains(err.Error(), p) {
		return errors.New(strings.ReplaceAll(err.Error(), p, secret.Redacted))
	}
	return err
}
