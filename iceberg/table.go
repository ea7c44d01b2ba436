package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	icego "github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/wharfdata/wharf/store"
)

// The keys of the table's catalog files, relative to its location.
const (
	metadataDir = "metadata/"
	hintKey     = metadataDir + "version-hint.text"
)

// metadataKey is the key of metadata version n.
func metadataKey(n int) string { return fmt.Sprintf("%sv%d.metadata.json", metadataDir, n) }

var metadataName = regexp.MustCompile(`^metadata/v([1-9][0-9]*)\.metadata\.json$`)

// Options tune a Table's commits. The zero value is the defaults.
type Options struct {
	// Attempts bounds a commit: after this many lost races it fails with ErrCommitConflict
	// (default 10).
	Attempts int
	// Backoff is the ceiling of the first wait after a lost race; each wait is a uniform
	// random draw below a ceiling that doubles, up to MaxBackoff (defaults 10 ms and 1 s).
	Backoff, MaxBackoff time.Duration
	// Catalog, when set, keeps the table as Ident in a SQL catalog instead of the bucket: the
	// current metadata file is the one its row names, and a commit moves the row (see
	// Catalog). No version hint is written.
	Catalog *Catalog
	Ident   Ident
	// FromHint has Load take the version the version hint names as the current one, without
	// looking for a newer one (a HEAD of the next version: one request fewer). For a writer
	// that commits after it loads: its commit's create-if-absent of the next version finds a
	// newer one all the same, and the retry reads the table as a plain Load does. A hint
	// that is missing or names a file since deleted is searched past as without it. Readers
	// leave it unset: they are shown what the hint says, which may lag.
	FromHint bool
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Attempts < 1 {
		c.Attempts = 10
	}
	if c.Backoff <= 0 {
		c.Backoff = 10 * time.Millisecond
	}
	if c.MaxBackoff < c.Backoff {
		c.MaxBackoff = max(time.Second, c.Backoff)
	}
	return c
}

// Table is an Apache Iceberg table whose catalog is the bucket: its metadata files are
// metadata/v1.metadata.json, v2, … below its location, the highest is the current one, and
// a commit is the create-if-absent of the next (see the package documentation). A Table
// holds the version it last read; its methods are safe for concurrent use, and commits
// through one Table are made one at a time.
type Table struct {
	st   *store.Store
	fio  *FileIO
	opts Options

	mu      sync.Mutex // held by a commit, and to read or set the state
	commits sync.Mutex // one commit at a time through this Table
	version int
	metaLoc string // the location of the metadata file of version
	tbl     *table.Table

	// readOnly: the Table was read from a metadata file (LoadFile), with no catalog to
	// commit through.
	readOnly bool
	// unconditional breaks commits on purpose, for the tests that prove the history checker
	// can fail: the next metadata file is put over whatever is there.
	unconditional bool
	// beforeCreate, when set, runs before each create of a metadata file (tests).
	beforeCreate func()
}

// Create creates an empty table (format version 2, unpartitioned) with schema at the
// location st is opened at, as metadata/v1.metadata.json made only if absent: a table
// already there is ErrTableExists. Field ids are assigned afresh, and the table's default
// name mapping (schema.name-mapping.default) maps the schema's column names to them, so
// that Parquet files written without field ids (as arrow-go writes them) can be added; the
// property wharf.created-at says when (Table.Created).
func Create(ctx context.Context, st *store.Store, schema *icego.Schema, opts *Options) (*Table, error) {
	t := newTable(st, opts)
	meta, err := table.NewMetadata(schema, icego.UnpartitionedSpec, table.UnsortedSortOrder, t.fio.root, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: creating the table at %s: %w", ErrMetadataInvalid, t.fio.root, err)
	}
	mapping, err := json.Marshal(meta.CurrentSchema().NameMapping())
	if err != nil {
		return nil, err
	}
	set := table.NewSetPropertiesUpdate(icego.Properties{table.DefaultNameMappingKey: string(mapping),
		createdKey: time.Now().UTC().Format(time.RFC3339Nano)})
	if meta, err = table.UpdateTableMetadata(meta, []table.Update{set}, ""); err != nil {
		return nil, fmt.Errorf("%w: creating the table at %s: %w", ErrMetadataInvalid, t.fio.root, err)
	}
	if t.opts.Catalog != nil {
		return t, t.createInCatalog(ctx, meta)
	}
	won, err := t.createMetadata(ctx, 1, meta)
	if err != nil {
		return nil, err
	}
	if !won {
		return nil, fmt.Errorf("%w: %s", ErrTableExists, t.fio.location(metadataKey(1)))
	}
	t.set(meta, 1)
	t.writeHint(ctx, 1)
	return t, nil
}

// Load reads the table at the location st is opened at, as of its current metadata version:
// ErrNoTable when there is none.
func Load(ctx context.Context, st *store.Store, opts *Options) (*Table, error) {
	t := newTable(st, opts)
	if err := t.refresh(ctx, t.opts.FromHint); err != nil {
		return nil, err
	}
	return t, nil
}

func newTable(st *store.Store, opts *Options) *Table {
	loc := strings.TrimRight(st.Describe().Location, "/")
	fio := NewFileIO(st, loc)
	fio.written, fio.kept = &writeLog{}, &avroCache{}
	return &Table{st: st, fio: fio, opts: opts.withDefaults()}
}

// Refresh reads the table's current metadata version (whatever Options.FromHint says).
func (t *Table) Refresh(ctx context.Context) error { return t.refresh(ctx, false) }

// refresh reads the table's current metadata version, or with fromHint the one the version
// hint names, when it has one.
func (t *Table) refresh(ctx context.Context, fromHint bool) error {
	if t.opts.Catalog != nil {
		return t.refreshFromCatalog(ctx)
	}
	n, meta, err := t.readCurrent(ctx, fromHint)
	if err != nil {
		return err
	}
	t.set(meta, n)
	return nil
}

// Location is the table's location: the URL of the store it was opened with.
func (t *Table) Location() string { return t.fio.root }

// FileIO is the table's file IO, for iceberg-go calls that take one.
func (t *Table) FileIO() *FileIO { return t.fio }

// Version is the number N of the metadata file (metadata/vN.metadata.json) the Table holds.
func (t *Table) Version() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.version
}

// Iceberg is iceberg-go's view of the table as of the version the Table holds: for scans
// (Iceberg().Scan()) and inspection. Commit through the Table's own methods, which retry a
// lost race; a transaction committed on it directly is tried once.
func (t *Table) Iceberg() *table.Table {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tbl
}

// Metadata is the table's metadata as of the version the Table holds.
func (t *Table) Metadata() table.Metadata { return t.Iceberg().Metadata() }

// Schema is the table's current schema.
func (t *Table) Schema() *icego.Schema { return t.Metadata().CurrentSchema() }

// Snapshots are the table's snapshots, oldest first.
func (t *Table) Snapshots() []table.Snapshot { return t.Metadata().Snapshots() }

// CurrentSnapshot is the table's current snapshot, nil before the first commit of data.
func (t *Table) CurrentSnapshot() *table.Snapshot { return t.Metadata().CurrentSnapshot() }

// DataFiles are the data files of the current snapshot, in manifest order.
func (t *Table) DataFiles(ctx context.Context) ([]icego.DataFile, error) {
	return dataFiles(t.Metadata().CurrentSnapshot(), t.fio.WithContext(ctx))
}

func dataFiles(snap *table.Snapshot, fio icebergio.IO) ([]icego.DataFile, error) {
	if snap == nil {
		return nil, nil
	}
	manifests, err := snap.Manifests(fio)
	if err != nil {
		return nil, err
	}
	var out []icego.DataFile
	for _, m := range manifests {
		// A manifest of only deleted entries (an overwrite's record of what it replaced) holds
		// no file of the snapshot: not read.
		if m.ManifestContent() != icego.ManifestContentData || !m.HasAddedFiles() && !m.HasExistingFiles() {
			continue
		}
		for e, err := range m.Entries(fio, true) {
			if err != nil {
				return nil, err
			}
			out = append(out, e.DataFile())
		}
	}
	return out, nil
}

// set makes meta, version n, the state of the Table.
func (t *Table) set(meta table.Metadata, n int) { t.setAt(meta, n, t.fio.location(metadataKey(n))) }

// setAt makes meta, version n read from or written to loc, the state of the Table.
func (t *Table) setAt(meta table.Metadata, n int, loc string) {
	fsF := func(ctx context.Context) (icebergio.IO, error) { return t.fio.WithContext(ctx), nil }
	tbl := table.New(table.Identifier{t.fio.root}, meta, loc, fsF, committer{t})
	t.mu.Lock()
	t.tbl, t.version, t.metaLoc = tbl, n, loc
	t.mu.Unlock()
}

// MetadataLocation is the location of the metadata file of the version the Table holds.
func (t *Table) MetadataLocation() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.metaLoc
}

// state returns the metadata and version the Table holds.
func (t *Table) state() (table.Metadata, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tbl.Metadata(), t.version
}

// readCurrent finds the current version and reads it: from the version hint upward, each
// next file that exists (a HEAD); from a listing of metadata/ when there is no usable hint,
// or when the file the search stops at is gone (old versions deleted by a writer). With
// fromHint, the version the hint names is read as it is, when it is there.
func (t *Table) readCurrent(ctx context.Context, fromHint bool) (int, table.Metadata, error) {
	hint := t.readHint(ctx)
	if fromHint && hint > 0 {
		if meta, err := t.readMetadata(ctx, hint); !errors.Is(err, store.ErrNotExist) {
			return hint, meta, err
		}
	}
	n, listed := hint, false
	for {
		if n == 0 && !listed {
			var err error
			if n, err = t.listVersions(ctx); err != nil {
				return 0, nil, err
			}
			listed = true
		}
		var err error
		if n, err = t.probeUp(ctx, n); err != nil {
			return 0, nil, err
		}
		if n == 0 {
			return 0, nil, fmt.Errorf("%w: %s holds no %s", ErrNoTable, t.fio.root, metadataKey(1))
		}
		meta, err := t.readMetadata(ctx, n)
		if errors.Is(err, store.ErrNotExist) && !listed {
			n = 0 // the hint names a version since deleted: list
			continue
		}
		if err == nil && hint < n {
			// A writer stopped (or lost its answer) between its metadata file and the hint:
			// bring the hint up for readers that take it as it is.
			t.writeHint(ctx, n)
		}
		return n, meta, err
	}
}

// probeUp returns the highest version from n up whose next does not exist.
func (t *Table) probeUp(ctx context.Context, n int) (int, error) {
	for {
		_, err := t.st.Head(ctx, metadataKey(n+1))
		if errors.Is(err, store.ErrNotExist) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		n++
	}
}

// readHint returns the version metadata/version-hint.text names, or 0 when it is missing or
// says no version; the hint is only where the search starts, so an unreadable one is no
// error.
func (t *Table) readHint(ctx context.Context) int {
	b, err := t.fio.WithContext(ctx).ReadFile(t.fio.location(hintKey))
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// listVersions returns the highest version in a listing of metadata/, 0 when none.
func (t *Table) listVersions(ctx context.Context) (int, error) {
	best := 0
	for o, err := range t.st.Walk(ctx, metadataDir) {
		if err != nil {
			return 0, err
		}
		if m := metadataName.FindStringSubmatch(o.Key); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > best {
				best = n
			}
		}
	}
	return best, nil
}

// readMetadata reads and parses version n.
func (t *Table) readMetadata(ctx context.Context, n int) (table.Metadata, error) {
	return t.readMetadataAt(ctx, t.fio.location(metadataKey(n)))
}

// readMetadataAt reads and parses the metadata file at name, a location below the table's.
func (t *Table) readMetadataAt(ctx context.Context, name string) (table.Metadata, error) {
	b, err := t.fio.WithContext(ctx).ReadFile(name)
	if err != nil {
		return nil, err
	}
	meta, err := table.ParseMetadataBytes(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMetadataInvalid, name, err)
	}
	if got := strings.TrimRight(meta.Location(), "/"); got != t.fio.root {
		return nil, fmt.Errorf("%w: %s names the location %q, not its own", ErrMetadataInvalid, name, got)
	}
	return meta, nil
}

// writeHint puts the version hint, for readers that start from it. A slower writer may put
// an older number over a newer one; readers search upward from it, so it is never wrong,
// only late. A failure is no error: the commit stands without it.
func (t *Table) writeHint(ctx context.Context, n int) {
	_ = t.fio.WithContext(ctx).WriteFile(t.fio.location(hintKey), []byte(strconv.Itoa(n)))
}
