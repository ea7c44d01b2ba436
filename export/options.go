package export

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/yamlconf"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// Config is the export section of wharf's config file: the state file and the exports. The
// CLI decodes it strictly from the file's top level (state: and exports:); the library never
// reads YAML, the environment or flags itself.
type Config struct {
	// State is the SQLite state file (run journal, chunk progress, delta cursors); default
	// .wharf/state.db beside the config file. StateBucket keeps them in each export's commit
	// log at its destination instead, under a writer lease.
	State   string   `yaml:"state"`
	Exports []Export `yaml:"exports"`
}

// Export is one export's typed options, an entry of the config file's exports: list.
type Export struct {
	Name string `yaml:"name"` // names the export in the journal, the manifest and {export}

	// Demo makes the CLI create the SQLite source with demo rows when it is missing.
	Demo bool `yaml:"demo"`
	// Validate makes the CLI validate the prefix after each run (as --validate does).
	Validate bool `yaml:"validate"`

	// Source is sqlite:///abs/path.db (or sqlite://./rel.db) or postgres://user@host:port/db.
	// A password is never part of the URL: give it as a reference in Password.
	Source   string `yaml:"source"`
	Password string `yaml:"password" secret:"ref"` // env://NAME or file:///path; postgres only

	Table string `yaml:"table"` // a table ("name" or "schema.name"), or
	Query string `yaml:"query"` // a SELECT whose rows are exported (exactly one of Table and Query)

	ChunkKey  string `yaml:"chunk_key"`          // an integer or timestamp column the rows are chunked on
	ChunkRows int    `yaml:"chunk_rows" min:"1"` // rows per chunk (one part per chunk); 0: DefaultChunkRows

	Mode         Mode   `yaml:"mode"`          // "" is ModeFull
	CursorColumn string `yaml:"cursor_column"` // ModeDelta: an integer or timestamp column that only grows

	Format Format `yaml:"format"` // "" is FormatParquet

	// Destination is a store URL template with {date}, {table}, {export} and {run_id}.
	Destination string `yaml:"destination"`
	// Store says how to open the destination: its backend's options (endpoint, region,
	// credential references…) and the settings the CLI adds (environment, allow-list).
	Store store.Config `yaml:"store"`

	// InvalidUTF8 decides what becomes of text that is not valid UTF-8 (a BLOB in a SQLite
	// TEXT or untyped column, a SQL_ASCII database's text): UTF8Refuse (the default) stops the
	// run at the first such value, naming the table, column, row key and value; UTF8Binary
	// looks for such values before the first part is written and writes every column that
	// holds one as binary in every part of the run.
	InvalidUTF8 UTF8Policy `yaml:"invalid_utf8"`
	// TimeUnits states, per SQLite date or timestamp column, the unit of the numbers it holds
	// (unix_seconds, unix_millis, unix_micros, unix_nanos, unix_days). A number in such a
	// column without a unit is refused; so is one whose conversion overflows or is finer than
	// the column keeps. Text is ISO-8601 and needs no unit.
	TimeUnits map[string]TimeUnit `yaml:"time_units"`
	// Infinity decides what becomes of PostgreSQL's infinity and -infinity in a date or
	// timestamp column: InfinityRefuse (the default) stops the run naming the column and the
	// row, InfinityNull writes NULL, InfinityClamp writes the type's largest or smallest value.
	Infinity InfinityPolicy `yaml:"infinity" null:"word"`
	// Superseded decides what becomes of the parts of earlier runs at the prefix once a run is
	// certified: SupersededKeep (the default) leaves them beside the new parts (manifest.json
	// lists only the new ones); SupersededMove moves each under _superseded/<its run_id>/, so
	// that a reader of the whole directory (Spark, Trino, Athena skip names starting with _)
	// reads only the certified run.
	Superseded SupersededPolicy `yaml:"superseded"`

	// Consistency decides what state of the source a run's chunks are read from:
	// ConsistencySnapshot (the default) reads every chunk from one snapshot, so the dataset is
	// the table as it was at one instant; ConsistencyChunk reads each chunk in its own short
	// transaction, holding nothing open on the source for the run.
	Consistency ConsistencyMode `yaml:"consistency"`
	// Iceberg, when set, commits every certified run to an Apache Iceberg table (TableConfig):
	// a full run as an overwrite snapshot, a delta run as an append.
	Iceberg *TableConfig `yaml:"iceberg"`

	// DeltaWait bounds how long a delta run on PostgreSQL waits, before it reads a row, for the
	// transactions open when it read its cursor's largest value (nil: DefaultDeltaWait). A
	// transaction still open then holds the run's window back (CursorWindow.Held).
	DeltaWait *time.Duration `yaml:"delta_wait"`
}

// UTF8Policy is Export.InvalidUTF8.
type UTF8Policy string

// The invalid-UTF-8 policies.
const (
	UTF8Refuse UTF8Policy = "refuse" // the default
	UTF8Binary UTF8Policy = "binary"
)

// InfinityPolicy is Export.Infinity.
type InfinityPolicy string

// The infinity policies.
const (
	InfinityRefuse InfinityPolicy = "refuse" // the default
	InfinityNull   InfinityPolicy = "null"
	InfinityClamp  InfinityPolicy = "clamp"
)

// SupersededPolicy is Export.Superseded.
type SupersededPolicy string

// The policies for earlier runs' parts.
const (
	SupersededKeep SupersededPolicy = "keep" // the default
	SupersededMove SupersededPolicy = "move"
)

// DefaultChunkRows is the chunk size when Export.ChunkRows is 0.
const DefaultChunkRows = 500_000

// Options say how one run goes.
type Options struct {
	StatePath string // the SQLite state file (the CLI defaults it to .wharf/state.db beside the config)
	Parallel  int    // chunks in flight; 0 or less is 1
	Resume    bool   // continue the export's interrupted run (M8, M9)
	Force     bool   // with Resume: go on even when the prefix holds _SUCCESS
	// BatchRows bounds the rows held in memory per chunk in flight (default 16,384).
	BatchRows int
	Version   string           // wharf's version, recorded in the manifest ("dev" when empty)
	Now       func() time.Time // clock; nil is time.Now
	Logger    *slog.Logger     // nil discards
	// Progress, when set, is called after each chunk (from the worker goroutines).
	Progress func(Progress)
	// Getenv reads the environment for env:// references (the source's password) and, unless
	// Export.Store has its own, the destination's store options; nil reads nothing.
	Getenv func(string) string
	// Lease configures the writer lease when StatePath is StateBucket; nil is
	// lease.DefaultConfig with the node id from Getenv's WHARF_NODE_ID.
	Lease *lease.Config
	// Verdicts, when set, remembers the destination's probe verdict across runs for the
	// writer lease of StateBucket (lease.Options.Verdicts); nil probes every run.
	Verdicts *probe.Verdicts
}

// Progress reports a run's progress after a chunk.
type Progress struct {
	Chunks, ChunksDone int
	Rows, Bytes        int64
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now().UTC()
	}
	return time.Now().UTC()
}

func (o *Options) log() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.New(slog.DiscardHandler)
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// Check validates e and fills its defaults. Errors are ErrConfig and name the field.
func (e *Export) Check() error {
	bad := func(field, format string, a ...any) error {
		return newErr("config", e.Name+"."+field, ErrConfig, fmt.Errorf(format, a...))
	}
	switch {
	case !namePattern.MatchString(e.Name):
		return newErr("config", "name", ErrConfig, fmt.Errorf("export name %q: use letters, digits, _ . -", e.Name))
	case e.Source == "":
		return bad("source", "no source given")
	case (e.Table == "") == (e.Query == ""):
		return bad("table", "give exactly one of table and query")
	case e.ChunkKey == "":
		return bad("chunk_key", "no chunking key given")
	case e.ChunkRows < 0:
		return bad("chunk_rows", "must be positive, got %d", e.ChunkRows)
	case e.Destination == "":
		return bad("destination", "no destination given")
	}
	if e.Table != "" {
		if _, err := tableName(e.Table); err != nil {
			return bad("table", "%v", err)
		}
	}
	if e.ChunkRows == 0 {
		e.ChunkRows = DefaultChunkRows
	}
	if err := e.checkValueOptions(bad); err != nil {
		return err
	}
	switch e.Mode {
	case "":
		e.Mode = ModeFull
	case ModeFull:
	case ModeDelta:
		if e.CursorColumn == "" {
			return bad("cursor_column", "mode delta needs a cursor column")
		}
	default:
		return bad("mode", "%q: want full or delta", e.Mode)
	}
	switch e.Format {
	case "":
		e.Format = FormatParquet
	case FormatParquet, FormatNDJSON, FormatCSV:
	default:
		return bad("format", "%q: want parquet, ndjson or csv", e.Format)
	}
	if err := e.checkReadOptions(bad); err != nil {
		return err
	}
	if err := checkTemplate(e.Destination); err != nil {
		return err
	}
	return e.checkTable(bad)
}

// checkValueOptions validates and defaults the options that decide what values become.
func (e *Export) checkValueOptions(bad func(field, format string, a ...any) error) error {
	e.InvalidUTF8 = cmp.Or(e.InvalidUTF8, UTF8Refuse)
	if e.InvalidUTF8 != UTF8Refuse && e.InvalidUTF8 != UTF8Binary {
		return bad("invalid_utf8", "%q: want refuse or binary", e.InvalidUTF8)
	}
	e.Infinity = cmp.Or(e.Infinity, InfinityRefuse)
	if e.Infinity != InfinityRefuse && e.Infinity != InfinityNull && e.Infinity != InfinityClamp {
		return bad("infinity", "%q: want refuse, null or clamp", e.Infinity)
	}
	e.Superseded = cmp.Or(e.Superseded, SupersededKeep)
	if e.Superseded != SupersededKeep && e.Superseded != SupersededMove {
		return bad("superseded", "%q: want keep or move", e.Superseded)
	}
	if len(e.TimeUnits) > 0 && !strings.HasPrefix(e.Source, "sqlite://") {
		return bad("time_units", "only a SQLite source holds numbers in date or timestamp columns")
	}
	for _, col := range slices.Sorted(maps.Keys(e.TimeUnits)) {
		if _, ok := microsPer[e.TimeUnits[col]]; !ok {
			return bad("time_units."+col, "%q: want unix_seconds, unix_millis, unix_micros, unix_nanos or unix_days", e.TimeUnits[col])
		}
	}
	return nil
}

// Vars are the values of the destination placeholders.
type Vars struct {
	Date   string // YYYY-MM-DD
	Table  string
	Export string
	RunID  string
}

// VarsFor returns the placeholder values of e for a run on day with runID.
func (e *Export) VarsFor(day time.Time, runID string) Vars {
	table := e.Table
	if parts, err := tableName(e.Table); err == nil {
		table = strings.Join(parts, ".") // "Other Schema"."weird.name" is Other Schema.weird.name
	}
	if table == "" {
		table = e.Name
	}
	return Vars{Date: day.UTC().Format(time.DateOnly), Table: table, Export: e.Name, RunID: runID}
}

var placeholder = regexp.MustCompile(`\{[^{}]*\}`)

func checkTemplate(t string) error {
	for _, p := range placeholder.FindAllString(t, -1) {
		switch p {
		case "{date}", "{table}", "{export}", "{run_id}":
		default:
			return newErr("config", "destination", ErrConfig,
				fmt.Errorf("unknown placeholder %s in %q (known: {date} {table} {export} {run_id})", p, t))
		}
	}
	return nil
}

// Expand replaces the placeholders of template with v. A placeholder whose value is empty is
// an error naming it (a validate of a {run_id} destination needs the run id).
func Expand(template string, v Vars) (string, error) {
	if err := checkTemplate(template); err != nil {
		return "", err
	}
	vals := map[string]string{"{date}": v.Date, "{table}": v.Table, "{export}": v.Export, "{run_id}": v.RunID}
	var missing error
	out := placeholder.ReplaceAllStringFunc(template, func(p string) string {
		if vals[p] == "" && missing == nil {
			missing = newErr("expand", template, ErrConfig, fmt.Errorf("no value for %s", p))
		}
		return vals[p]
	})
	return out, missing
}

// UsesRunID reports whether template has a {run_id} placeholder.
func UsesRunID(template string) bool { return strings.Contains(template, "{run_id}") }

// DefaultState is the state file, relative to the config file's directory.
const DefaultState = ".wharf/state.db"

// Prepare readies the export section of the config file at file (in directory dir) to run:
// the state defaults to DefaultState, local paths are made absolute against dir, and every
// export is checked (names unique, each its own Check) with its store options completed by
// complete and its destination checked before anything is opened. Errors name the file and
// the export; a mistake of the section itself is store.ErrConfig (exit 2).
func (c *Config) Prepare(file, dir string, complete func(*store.Config) *store.Config) error {
	if len(c.Exports) == 0 {
		return configErr(&yamlconf.Error{File: file, Msg: "no exports: add a list under exports:"})
	}
	if c.State == "" {
		c.State = DefaultState
	}
	c.Rebase(dir)
	seen := map[string]bool{}
	for i := range c.Exports {
		e := &c.Exports[i]
		where := fmt.Sprintf("exports[%d]", i)
		if seen[e.Name] {
			return configErr(&yamlconf.Error{File: file, Path: where, Msg: fmt.Sprintf("a second export named %q", e.Name)})
		}
		seen[e.Name] = true
		if err := e.Check(); err != nil {
			return configErr(&yamlconf.Error{File: file, Path: where, Msg: err.Error()})
		}
		e.Store = *complete(&e.Store)
		if err := e.CheckDestination(); err != nil {
			var ye *yamlconf.Error
			if errors.As(err, &ye) && ye.File != "" {
				return err // it names the file, line and key
			}
			return fmt.Errorf("%s: %s: %w", file, where, err)
		}
	}
	return nil
}

// configErr is a mistake in the config file: store.ErrConfig, naming its place.
func configErr(ye *yamlconf.Error) error { return errcode.E("config", "", store.ErrConfig, ye) }

// Rebase makes the local paths of c absolute against dir, the directory of the config file
// that gave them: the state file, SQLite sources (sqlite://rel.db) and local destinations.
func (c *Config) Rebase(dir string) {
	if c.State != StateBucket {
		c.State = rebase(dir, c.State)
	}
	for i := range c.Exports {
		e := &c.Exports[i]
		if rest, ok := strings.CutPrefix(e.Source, "sqlite://"); ok && rest != "" && !strings.HasPrefix(rest, "/") {
			e.Source = "sqlite://" + filepath.ToSlash(rebase(dir, rest))
		}
		if e.Destination != "" && e.Destination != "-" && !isURL(e.Destination) {
			abs := rebase(dir, e.Destination)
			if strings.HasSuffix(e.Destination, "/") && !strings.HasSuffix(abs, "/") {
				abs += "/"
			}
			e.Destination = abs
		}
		if e.Iceberg != nil && e.Iceberg.Location != "" && !isURL(e.Iceberg.Location) {
			e.Iceberg.Location = rebase(dir, e.Iceberg.Location)
		}
		if e.Iceberg != nil && e.Iceberg.Catalog != nil {
			e.Iceberg.Catalog.Rebase(dir)
		}
	}
}

func rebase(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// isURL reports whether s has the form scheme://… with a scheme that is not a path ("./a://b").
func isURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	return ok && scheme != "" && !strings.ContainsAny(scheme, "/.\\")
}

// MemoryBound is the soft limit on the Go heap an export runs under. An export's live memory
// is bounded per chunk in flight (a record batch of at most 16,384 rows or 8 MiB of values, a
// row group of at most 64 Ki rows or 32 MiB of pages, a store's part buffer); without a limit
// the collector lets the heap grow to twice that, and further on a busy machine where it gets
// little CPU. With it, peak RSS stays under 256 MiB at --parallel 2 to S3; an export whose
// live memory is larger (a high --parallel) passes the limit and the collector works harder,
// never failing.
const MemoryBound = 192 << 20
