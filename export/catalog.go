package export

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/wharfdata/wharf/iceberg"
	"github.com/wharfdata/wharf/internal/secret"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// CatalogConfig is an iceberg: section's catalog: a SQL catalog (package iceberg's Catalog:
// the tables of Apache Iceberg's JDBC catalog, which Spark, Trino, PyIceberg and iceberg-go
// read) that keeps the table instead of the bucket. The database makes each commit's
// compare-and-set, so the table's store need not be proven cas.
type CatalogConfig struct {
	// URI is the database: postgres://user@host:port/db (a password is never part of it:
	// give it as a reference in Password), or sqlite:///path/catalog.db (made when missing).
	URI      string `yaml:"uri"`
	Password string `yaml:"password" secret:"ref"` // env://NAME or file:///path; postgres only
	// Name is the catalog's name, its catalog_name column (default "wharf").
	Name string `yaml:"name"`
}

// The names a table gets in a catalog when its iceberg: section gives none.
const (
	defaultCatalogName = "wharf"
	defaultNamespace   = "default"
)

// tableIdent is e's table's name in its catalog: TableConfig.Namespace and Name, by default
// "default" and the export's name.
func (e *Export) tableIdent() iceberg.Ident {
	id := iceberg.Ident{Namespace: e.Iceberg.Namespace, Name: e.Iceberg.Name}
	if id.Namespace == "" {
		id.Namespace = defaultNamespace
	}
	if id.Name == "" {
		id.Name = e.Name
	}
	return id
}

// checkCatalog validates the catalog: and the names given for it.
func (e *Export) checkCatalog(bad func(field, format string, a ...any) error) error {
	t := e.Iceberg
	if t.Catalog == nil {
		if t.Namespace != "" || t.Name != "" {
			return bad("iceberg", "namespace and name name the table in a catalog: give iceberg.catalog, or leave them out (a table the bucket keeps is named by its location)")
		}
		return nil
	}
	c := t.Catalog
	switch {
	case strings.HasPrefix(c.URI, "sqlite://"):
		if c.Password != "" {
			return bad("iceberg.catalog.password", "a SQLite catalog has no password")
		}
	case strings.HasPrefix(c.URI, "postgres://"), strings.HasPrefix(c.URI, "postgresql://"):
	default:
		return bad("iceberg.catalog.uri", "%q: want postgres://user@host:port/db or sqlite:///path/catalog.db", c.URI)
	}
	for field, v := range map[string]string{"iceberg.namespace": t.Namespace, "iceberg.name": t.Name, "iceberg.catalog.name": c.Name} {
		if len(v) > 255 || strings.ContainsAny(v, "\x00\n") {
			return bad(field, "%q: want at most 255 characters, on one line", v)
		}
	}
	return nil
}

// tableCatalog is an open catalog: the database, closed with close.
type tableCatalog struct {
	cat   *iceberg.Catalog
	db    *sql.DB
	pw    secret.Value
	where string // postgres host:port/db or sqlite path, for messages
}

func (c *tableCatalog) close() {
	if c != nil {
		c.db.Close()
	}
}

// scrub keeps the catalog's password out of err's message, should a driver ever echo it.
func (c *tableCatalog) scrub(err error) error {
	if c == nil || err == nil {
		return err
	}
	if pw := c.pw.Reveal(); pw != "" && strings.Contains(err.Error(), pw) {
		return errors.New(strings.ReplaceAll(err.Error(), pw, secret.Redacted))
	}
	return err
}

// openCatalog opens the database of cfg and its catalog (its tables made when missing).
func openCatalog(ctx context.Context, cfg *CatalogConfig, getenv func(string) string) (*tableCatalog, error) {
	name := cfg.Name
	if name == "" {
		name = defaultCatalogName
	}
	tc := &tableCatalog{}
	dialect := iceberg.Postgres
	if strings.HasPrefix(cfg.URI, "sqlite://") {
		path, err := sqlitePath(cfg.URI)
		if err != nil {
			return nil, err
		}
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_txlock=immediate")
		if err != nil {
			return nil, err
		}
		tc.db, tc.where, dialect = db, "sqlite "+path, iceberg.SQLite
	} else {
		pc, err := pgx.ParseConfig(cfg.URI)
		if err != nil {
			return nil, newErr("config", "iceberg.catalog.uri", ErrConfig, errors.New("cannot parse the catalog's URL (is it postgres://user@host:port/db?)"))
		}
		host := fmt.Sprintf("%s:%d/%s", pc.Host, pc.Port, pc.Database)
		if u, err := url.Parse(cfg.URI); err == nil {
			if _, set := u.User.Password(); set || u.Query().Has("password") {
				return nil, &store.Error{Op: "config", Key: "iceberg.catalog.password", Kind: store.ErrCredentialLiteral,
					Err: fmt.Errorf("the catalog URL for %s holds a password: give password: env://NAME instead", host)}
			}
		}
		pw, err := store.ResolveRef("iceberg.catalog.password", cfg.Password, getenv)
		if err != nil {
			return nil, err
		}
		pc.Password = pw.Reveal()
		pc.RuntimeParams["application_name"] = "wharf iceberg catalog"
		tc.db, tc.pw, tc.where = stdlib.OpenDB(*pc), pw, "postgres "+host
		tc.db.SetMaxOpenConns(2)
	}
	cat, err := iceberg.NewCatalog(ctx, tc.db, dialect, name)
	if err != nil {
		tc.close()
		return nil, fmt.Errorf("%s: %w", tc.where, tc.scrub(err))
	}
	tc.cat = cat
	return tc, nil
}

// tableOptions opens what e's table needs before it is loaded: its catalog, or else the proof
// that st enforces conditional writes (the bucket is the catalog).
func tableOptions(ctx context.Context, e *Export, st *store.Store, getenv func(string) string, verdicts *probe.Verdicts) (*iceberg.Options, *tableCatalog, error) {
	if e.Iceberg.Catalog != nil {
		tc, err := openCatalog(ctx, e.Iceberg.Catalog, getenv)
		if err != nil {
			return nil, nil, err
		}
		return &iceberg.Options{Catalog: tc.cat, Ident: e.tableIdent()}, tc, nil
	}
	res, err := verdicts.Coordination(ctx, st)
	if err == nil {
		err = res.RequireCAS()
	}
	return nil, nil, err
}
