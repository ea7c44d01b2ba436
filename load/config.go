package load

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/wharfdata/wharf/errcode"
)

// Config is wharf.yaml's load: section: the target of each export's loads, by the export's
// name.
type Config map[string]*Target

// Target says where and how an export's runs are loaded.
type Target struct {
	// URL is the PostgreSQL database: postgres://user@host:port/db. A password is never part
	// of it: give it as a reference in Password.
	URL      string `yaml:"target"`
	Password string `yaml:"password" secret:"ref"` // env://NAME or file:///path
	// Table is the table loaded: "name" or "schema.name" (default: the export's name).
	Table string `yaml:"table"`
	Mode  Mode   `yaml:"mode"` // "" is ModeReplace
	// Key names the key columns of ModeMerge.
	Key []string `yaml:"key"`
	// Ledger is the ledger table: "name" or "schema.name" (default: DefaultLedger, in the
	// schema of Table).
	Ledger string `yaml:"ledger"`
	// Columns, for a dataset of records (a backfill's store sink, each record a JSON object),
	// are the table's columns, each a field of the records: "name" (jsonb) or "name:type"
	// (a type of RecordTypes). None: one jsonb column, RecordColumn.
	Columns []string `yaml:"columns"`
}

// RecordTypes are the types a column of Target.Columns can have, by the name it is given
// with, and as format_type() writes each. A field is cast from its JSON text (jsonb: its JSON
// value), by PostgreSQL's own input functions: a value that is not of the type fails the load.
var RecordTypes = map[string]string{
	"jsonb":            "jsonb",
	"text":             "text",
	"bigint":           "bigint",
	"integer":          "integer",
	"double precision": "double precision",
	"numeric":          "numeric",
	"boolean":          "boolean",
	"timestamptz":      "timestamp with time zone",
	"date":             "date",
	"uuid":             "uuid",
}

// recordField is one column of Target.Columns.
type recordField struct{ name, pg string }

// fields parses Target.Columns.
func (t *Target) fields() ([]recordField, error) {
	var out []recordField
	for _, c := range t.Columns {
		name, typ, typed := strings.Cut(c, ":")
		name, typ = strings.TrimSpace(name), strings.Join(strings.Fields(strings.ToLower(typ)), " ")
		if !typed {
			typ = "jsonb"
		}
		pg, ok := RecordTypes[typ]
		switch {
		case !identPattern.MatchString(name):
			return nil, fmt.Errorf("column %q: want name or name:type, the name of letters, digits and _", c)
		case !ok:
			return nil, fmt.Errorf("column %q: type %q is not one of %s", c, typ, strings.Join(slices.Sorted(maps.Keys(RecordTypes)), ", "))
		case slices.ContainsFunc(out, func(f recordField) bool { return f.name == name }):
			return nil, fmt.Errorf("column %q is given twice", name)
		}
		out = append(out, recordField{name: name, pg: pg})
	}
	return out, nil
}

// Mode is Target.Mode.
type Mode string

// The load modes.
const (
	ModeReplace Mode = "replace" // the default
	ModeAppend  Mode = "append"
	ModeMerge   Mode = "merge"
)

// DefaultLedger is the name of the ledger table when Target.Ledger is empty.
const DefaultLedger = "wharf_load_ledger"

var identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// tableName splits "name" or "schema.name" into a pgx.Identifier.
func tableName(s string) (pgx.Identifier, error) {
	parts := strings.Split(s, ".")
	if len(parts) > 2 {
		return nil, fmt.Errorf("%q: want name or schema.name", s)
	}
	for _, p := range parts {
		if !identPattern.MatchString(p) {
			return nil, fmt.Errorf("%q: want name or schema.name, of letters, digits and _", s)
		}
	}
	return pgx.Identifier(parts), nil
}

// Check validates t, the target of export's loads (export "": a target given by flags alone),
// and fills its defaults. Errors are ErrConfig and name the option.
func (t *Target) Check(export string) error {
	bad := func(key, format string, a ...any) error {
		where := "load." + export + "." + key
		if export == "" { // a load given by flags alone
			where = "--" + key
		}
		return errcode.E("config", where, ErrConfig, fmt.Errorf(format, a...))
	}
	switch {
	case t.URL == "":
		return bad("target", "no target given (postgres://user@host:port/db)")
	case !strings.HasPrefix(t.URL, "postgres://") && !strings.HasPrefix(t.URL, "postgresql://"):
		scheme, _, _ := strings.Cut(t.URL, "://")
		return bad("target", "target scheme %q: want postgres://", scheme)
	}
	if t.Table == "" {
		t.Table = export
	}
	if _, err := tableName(t.Table); err != nil {
		return bad("table", "%v", err)
	}
	if t.Ledger != "" {
		if _, err := tableName(t.Ledger); err != nil {
			return bad("ledger", "%v", err)
		}
	}
	switch t.Mode {
	case "":
		t.Mode = ModeReplace
	case ModeReplace, ModeAppend, ModeMerge:
	default:
		return bad("mode", "mode %q: want replace, append or merge", t.Mode)
	}
	switch {
	case t.Mode == ModeMerge && len(t.Key) == 0:
		return bad("key", "mode merge needs the key columns (key: [id])")
	case t.Mode != ModeMerge && len(t.Key) > 0:
		return bad("key", "key columns go with mode merge, not %s", t.Mode)
	}
	for i, k := range t.Key {
		if k == "" || slices.Contains(t.Key[:i], k) {
			return bad("key", "key column %q: empty or given twice", k)
		}
	}
	fs, err := t.fields()
	if err != nil {
		return bad("columns", "%v", err)
	}
	for _, k := range t.Key {
		if len(fs) > 0 && !slices.ContainsFunc(fs, func(f recordField) bool { return f.name == k }) {
			return bad("key", "key column %q is not one of the columns", k)
		}
	}
	return nil
}

// ledgerName is the ledger's identifier: Ledger, or DefaultLedger in the table's schema.
func (t *Target) ledgerName() pgx.Identifier {
	if t.Ledger != "" {
		id, _ := tableName(t.Ledger)
		return id
	}
	table, _ := tableName(t.Table)
	if len(table) == 2 {
		return pgx.Identifier{table[0], DefaultLedger}
	}
	return pgx.Identifier{DefaultLedger}
}

// MemoryBound is the soft limit on the Go heap a load (or a --pool of loads) runs under: a
// load holds one batch of one part's decoded rows and 1 MiB of encoded rows, but the
// collector, left to itself, lets the heap grow to twice the live memory; under this limit
// it collects sooner. bench/README.md ("load") has the peak RSS at --pool 1, 4 and 16.
const MemoryBound = 160 << 20
