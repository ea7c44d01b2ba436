package iceberg

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/wharfdata/wharf/internal/secret"
	"github.com/wharfdata/wharf/store"
)

// Dialect is the SQL database of a Catalog.
type Dialect string

// The databases a Catalog runs on.
const (
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

// Ident names a table in a catalog: its namespace (levels joined by '.') and its name.
type Ident struct{ Namespace, Name string }

func (id Ident) String() string { return id.Namespace + "." + id.Name }

// Catalog is a SQL catalog of Iceberg tables, in the tables of Apache Iceberg's JDBC catalog
// (iceberg_tables, iceberg_namespace_properties) that Java's JdbcCatalog, PyIceberg's
// SqlCatalog and iceberg-go's SQL catalog keep too: each table is a row naming its current
// metadata file. A table of a Catalog (Options.Catalog) is committed by writing its next
// metadata file under a name of its own (metadata/00002-<uuid>.metadata.json) and moving the
// row to it with UPDATE … WHERE metadata_location = the one the commit was made on: the
// compare-and-set is the database's, so the store need not have conditional writes.
type Catalog struct {
	db      *sql.DB
	dialect Dialect
	name    string
	typed   bool // iceberg_type exists (the JDBC catalog's schema V1)
	// unconditional breaks commits on purpose, for the test that proves the history checker
	// can fail: the row is moved without comparing it.
	unconditional bool
	// loseAnswer, when set and true for an UPDATE that moved the row, fails it as if its
	// answer were lost (tests).
	loseAnswer func() bool
	// Set by OpenCatalog: the database is the Catalog's to close; the password, to scrub.
	owned bool
	pw    secret.Value
	where string
}

// NewCatalog is the catalog name in db, whose tables are made when missing. db stays the
// caller's to close.
func NewCatalog(ctx context.Context, db *sql.DB, dialect Dialect, name string) (*Catalog, error) {
	if dialect != Postgres && dialect != SQLite {
		return nil, fmt.Errorf("iceberg catalog: dialect %q: want postgres or sqlite", dialect)
	}
	if name == "" {
		return nil, errors.New("iceberg catalog: no catalog name")
	}
	c := &Catalog{db: db, dialect: dialect, name: name}
	for _, ddl := range []string{
		`CREATE TABLE IF NOT EXISTS iceberg_tables (
  catalog_name VARCHAR(255) NOT NULL,
  table_namespace VARCHAR(255) NOT NULL,
  table_name VARCHAR(255) NOT NULL,
  metadata_location VARCHAR(1000),
  previous_metadata_location VARCHAR(1000),
  iceberg_type VARCHAR(5),
  PRIMARY KEY (catalog_name, table_namespace, table_name))`,
		`CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
  catalog_name VARCHAR(255) NOT NULL,
  namespace VARCHAR(255) NOT NULL,
  property_key VARCHAR(255) NOT NULL,
  property_value VARCHAR(1000),
  PRIMARY KEY (catalog_name, namespace, property_key))`,
	} {
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			return nil, c.fail("create its tables", err)
		}
	}
	// A catalog made before the JDBC schema's V1 has no iceberg_type column.
	_, err := db.ExecContext(ctx, `SELECT iceberg_type FROM iceberg_tables WHERE 1 = 0`)
	c.typed = err == nil
	return c, nil
}

// Name is the catalog's name (catalog_name in its tables).
func (c *Catalog) Name() string { return c.name }

func (c *Catalog) fail(what string, err error) error {
	return fmt.Errorf("%w: iceberg catalog %q (%s): %s: %w", ErrCatalog, c.name, c.dialect, what, err)
}

// q rebinds a statement written with ? to the dialect's placeholders.
func (c *Catalog) q(s string) string {
	if c.dialect != Postgres {
		return s
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// current returns the location of id's current metadata file, "" when the catalog has no
// such table.
func (c *Catalog) current(ctx context.Context, id Ident) (string, error) {
	var loc sql.NullString
	err := c.db.QueryRowContext(ctx, c.q(`SELECT metadata_location FROM iceberg_tables
WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?`), c.name, id.Namespace, id.Name).Scan(&loc)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil:
		return "", c.fail("read "+id.String(), err)
	}
	return loc.String, nil
}

// create registers id at loc, with its namespace, in one transaction, and reports whether it
// did: false when the catalog already has the table.
func (c *Catalog) create(ctx context.Context, id Ident, loc string) (bool, error) {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return false, c.fail("begin", err)
	}
	defer func() { _ = tx.Rollback() }()
	var n int
	if err := tx.QueryRowContext(ctx, c.q(`SELECT count(*) FROM iceberg_tables
WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?`), c.name, id.Namespace, id.Name).Scan(&n); err != nil {
		return false, c.fail("read "+id.String(), err)
	}
	if n > 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, c.q(`INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value)
VALUES (?, ?, 'exists', 'true') ON CONFLICT DO NOTHING`), c.name, id.Namespace); err != nil {
		return false, c.fail("create the namespace "+id.Namespace, err)
	}
	cols, vals, args := "catalog_name, table_namespace, table_name, metadata_location", "?, ?, ?, ?", []any{c.name, id.Namespace, id.Name, loc}
	if c.typed {
		cols, vals = cols+", iceberg_type", vals+", 'TABLE'"
	}
	if _, err := tx.ExecContext(ctx, c.q(`INSERT INTO iceberg_tables (`+cols+`) VALUES (`+vals+`)`), args...); err != nil {
		if isDuplicate(err) {
			return false, nil // made meanwhile by another writer
		}
		return false, c.fail("register "+id.String(), err)
	}
	if err := tx.Commit(); err != nil {
		if isDuplicate(err) {
			return false, nil
		}
		return false, c.fail("register "+id.String(), err)
	}
	return true, nil
}

// swap moves id from the metadata file old to next, only if it is still at old, and reports
// whether it did.
func (c *Catalog) swap(ctx context.Context, id Ident, old, next string) (bool, error) {
	set := "metadata_location = ?, previous_metadata_location = ?"
	if c.typed {
		set += ", iceberg_type = 'TABLE'"
	}
	where, args := " AND metadata_location = ?", []any{next, old, c.name, id.Namespace, id.Name, old}
	if c.unconditional {
		where, args = "", args[:5]
	}
	res, err := c.db.ExecContext(ctx, c.q(`UPDATE iceberg_tables SET `+set+`
WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?`+where), args...)
	if err == nil && c.loseAnswer != nil && c.loseAnswer() {
		err = errors.New("connection reset after the statement was sent")
	}
	if err != nil {
		return false, c.fail("commit "+id.String(), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, c.fail("commit "+id.String(), err)
	}
	return n == 1, nil
}

// isDuplicate reports whether err is a primary key's unique violation (PostgreSQL's 23505,
// SQLite's constraint failure).
func isDuplicate(err error) bool {
	s := err.Error()
	return strings.Contains(s, "23505") || strings.Contains(s, "UNIQUE constraint failed")
}

// catalogKey is the key of a catalog table's metadata version n: a name no other writer can
// make (Java's and iceberg-go's naming: 00002-<uuid>.metadata.json).
func catalogKey(n int) string {
	return fmt.Sprintf("%s%05d-%s.metadata.json", metadataDir, n, uuid.NewString())
}

var catalogName = regexp.MustCompile(`/metadata/([0-9]+)-[^/]*\.metadata\.json$`)

// catalogVersion is the version a catalog's metadata location names.
func catalogVersion(loc string) (int, error) {
	m := catalogName.FindStringSubmatch(loc)
	if m == nil {
		if m = regexp.MustCompile(`/metadata/v([0-9]+)\.metadata\.json$`).FindStringSubmatch(loc); m == nil {
			return 0, fmt.Errorf("%w: the catalog names %q, not a metadata/NNNNN-….metadata.json", ErrMetadataInvalid, loc)
		}
	}
	return strconv.Atoi(m[1])
}

// createInCatalog writes meta as version 1 under a name of its own and registers the table
// in the catalog: ErrTableExists when the catalog has it already (the file is then removed).
func (t *Table) createInCatalog(ctx context.Context, meta table.Metadata) error {
	cat, id := t.opts.Catalog, t.opts.Ident
	key := catalogKey(1)
	loc := t.fio.location(key)
	body, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("%w: encoding %s: %w", ErrMetadataInvalid, key, err)
	}
	if err := t.fio.WithContext(ctx).put(key, loc, body, &store.PutOptions{ContentType: "application/json"}); err != nil {
		return err
	}
	made, err := cat.create(ctx, id, loc)
	if err != nil {
		return err
	}
	if !made {
		_ = t.st.Delete(ctx, key, nil)
		return fmt.Errorf("%w: %s in the catalog %q", ErrTableExists, id, cat.name)
	}
	t.setAt(meta, 1, loc)
	return nil
}

// refreshFromCatalog reads the version the catalog's row names.
func (t *Table) refreshFromCatalog(ctx context.Context) error {
	cat, id := t.opts.Catalog, t.opts.Ident
	loc, err := cat.current(ctx, id)
	if err != nil {
		return err
	}
	if loc == "" {
		return fmt.Errorf("%w: the catalog %q has no table %s", ErrNoTable, cat.name, id)
	}
	n, err := catalogVersion(loc)
	if err != nil {
		return err
	}
	meta, err := t.readMetadataAt(ctx, loc)
	if err != nil {
		return err
	}
	t.setAt(meta, n, loc)
	return nil
}

// commitToCatalog writes next, version n, under a name of its own and moves the catalog's
// row to it from the version the Table holds: errLostRace when another writer moved it first
// (the file is then removed with the attempt's other files).
func (t *Table) commitToCatalog(ctx context.Context, next table.Metadata, n int) (string, error) {
	cat, id := t.opts.Catalog, t.opts.Ident
	key := catalogKey(n)
	loc := t.fio.location(key)
	body, err := json.Marshal(next)
	if err != nil {
		return "", fmt.Errorf("%w: encoding %s: %w", ErrMetadataInvalid, key, err)
	}
	if err := t.fio.WithContext(ctx).put(key, loc, body, &store.PutOptions{ContentType: "application/json"}); err != nil {
		return "", err
	}
	moved, err := cat.swap(ctx, id, t.MetadataLocation(), loc)
	if err != nil {
		// The answer is lost: the row may have moved. Only this commit can have moved it to
		// loc (a name no other writer makes), so the row says which.
		if cur, rerr := cat.current(ctx, id); rerr == nil && cur == loc {
			moved, err = true, nil
		} else {
			return "", err // unknown: the file stays, named or not; the change's id tells later
		}
	}
	if !moved {
		return "", errLostRace
	}
	t.setAt(next, n, loc)
	return loc, nil
}

// LoadFile reads the table whose metadata file is at key below the location st is opened at
// (metadata/00003-<uuid>.metadata.json, metadata/v3.metadata.json), as of that version, to
// read: it has no catalog to commit through.
func LoadFile(ctx context.Context, st *store.Store, key string) (*Table, error) {
	t := newTable(st, nil)
	loc := t.fio.location(key)
	n, err := catalogVersion(loc)
	if err != nil {
		return nil, err
	}
	meta, err := t.readMetadataAt(ctx, loc)
	if errors.Is(err, store.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s: %w", ErrNoTable, loc, err)
	}
	if err != nil {
		return nil, err
	}
	t.setAt(meta, n, loc)
	t.readOnly = true
	return t, nil
}
