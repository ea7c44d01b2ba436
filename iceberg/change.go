package iceberg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	icego "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/wharfdata/wharf/store"
)

// CommitIDKey is the snapshot summary property that names the change a snapshot made
// (Change.ID): a change whose ID a snapshot of the table carries is in the table.
const CommitIDKey = "wharf.commit-id"

// createdKey is the table property that says when wharf created the table (RFC 3339, UTC).
const createdKey = "wharf.created-at"

// File is a Parquet data file to add to a table.
type File struct {
	// Path is the file's location below the table's, or its key relative to the table's
	// location (data/x.parquet).
	Path string
	// Size is the file's size in bytes, needed with Footer.
	Size int64
	// Footer is the file's Parquet metadata as its writer had it (pqarrow's
	// FileWriter.FileMetadata after Close): the file's statistics are taken from it and
	// nothing of the file is read. Nil reads the footer from the store.
	Footer *metadata.FileMetaData
}

// Change is one commit to a table, made at most once when it has an ID.
type Change struct {
	// ID names the change in the snapshot's summary (CommitIDKey). When a snapshot of the
	// table already carries it, the change is in the table: Commit commits nothing and says
	// so (Committed.Already). So a writer that lost the answer to its commit, or crashed
	// after it, makes it again safely. Files of a change with an ID are taken to be new to
	// the table, which saves reading every manifest; without an ID a file already in the
	// current snapshot is refused.
	ID string
	// Overwrite replaces every data file of the current snapshot by Files (an overwrite
	// snapshot); false appends Files.
	Overwrite bool
	// Files are the data files, each written below the table's location.
	Files []File
	// Remove are data files of the current snapshot (locations, or keys relative to the
	// table's location) that Files replace, in the same snapshot (an overwrite): a repair's
	// new parts replacing the parts they supersede. When the current snapshot holds none of
	// them the change is not made (Committed.NotCurrent); when it holds only some, the change
	// is refused (ErrMetadataInvalid), as the table is not what the change was made for.
	Remove []string
	// Schema is the schema Files were written with. A column it has and the table does not
	// is added to the table's schema (an optional field with a new id) in the same commit;
	// a column of the table it lacks, or has with another type, is ErrSchemaChanged. Nil:
	// the table's schema, unchecked.
	Schema *arrow.Schema
	// Summary adds properties to the snapshot's summary (keys wharf.… by convention).
	Summary map[string]string
	// Guard, when set, is asked on each attempt with the current snapshot's summary
	// properties (nil before the first snapshot): an error commits nothing and is returned.
	// An export's full run refuses so to replace a later run's files with its own.
	Guard func(current map[string]string) error
}

// Committed is what Commit did.
type Committed struct {
	Version  int   // N of the metadata file the change is in (or was found in)
	Snapshot int64 // the snapshot that holds the change; 0 when it changed nothing
	// Already: a snapshot carrying the change's ID was in the table before this commit.
	Already bool
	// NotCurrent: the current snapshot holds none of Change.Remove: nothing was committed.
	NotCurrent bool
}

// Commit makes change c as one snapshot of the table (see Change), with the retries of a
// lost race every commit has. It returns where the change is.
func (t *Table) Commit(ctx context.Context, c Change) (Committed, error) {
	paths, err := t.locations(fileNames(c.Files))
	if err != nil {
		return Committed{}, err
	}
	remove, err := t.locations(c.Remove)
	if err != nil {
		return Committed{}, err
	}
	files := slices.Clone(c.Files)
	for i := range files {
		files[i].Path = paths[i]
	}
	var out Committed
	what := "append"
	if c.Overwrite {
		what = "overwrite"
	}
	err = t.commit(ctx, what, func(ctx context.Context, tx *table.Transaction) (bool, error) {
		out = Committed{}
		base := t.Metadata()
		if c.ID != "" {
			if s := snapshotWith(base, c.ID); s != nil {
				out = Committed{Version: t.Version(), Snapshot: s.SnapshotID, Already: true}
				return false, nil
			}
		}
		if c.Guard != nil {
			var props map[string]string
			if s := base.CurrentSnapshot(); s != nil && s.Summary != nil {
				props = s.Summary.Properties
			}
			if err := c.Guard(props); err != nil {
				return false, err
			}
		}
		added, err := evolve(tx, base, c.Schema)
		if err != nil {
			return false, err
		}
		var current []icego.DataFile
		if c.Overwrite && base.CurrentSnapshot() != nil {
			if current, err = dataFiles(base.CurrentSnapshot(), t.fio.WithContext(ctx)); err != nil {
				return false, err
			}
		}
		// An overwrite keeps a file both current and among Files: neither removed nor added.
		kept := map[string]bool{}
		for _, df := range current {
			if slices.ContainsFunc(files, func(f File) bool { return f.Path == df.FilePath() }) {
				kept[df.FilePath()] = true
			}
		}
		current = slices.DeleteFunc(current, func(df icego.DataFile) bool { return kept[df.FilePath()] })
		todo := slices.DeleteFunc(slices.Clone(files), func(f File) bool { return kept[f.Path] })
		staged, err := tx.StagedTable()
		if err != nil {
			return false, err
		}
		meta := staged.Metadata()
		add, err := t.dataFiles(ctx, meta, todo)
		if err != nil {
			return false, err
		}
		summary := icego.Properties{}
		for k, v := range c.Summary {
			summary[k] = v
		}
		if c.ID != "" {
			summary[CommitIDKey] = c.ID
		}
		var opts []table.WriteOption
		if c.ID != "" {
			opts = append(opts, table.WithoutDuplicateCheck())
		}
		if len(remove) > 0 {
			del, err := t.currentFiles(ctx, base, remove)
			if err != nil || del == nil {
				out.NotCurrent = err == nil
				return false, err
			}
			return true, tx.ReplaceDataFilesWithDataFiles(ctx, del, add, summary, opts...)
		}
		if len(current) == 0 {
			if len(add) == 0 {
				return added > 0, nil
			}
			return true, tx.AddDataFiles(ctx, add, summary, opts...)
		}
		return true, tx.ReplaceDataFilesWithDataFiles(ctx, current, add, summary, opts...)
	})
	if err != nil {
		return Committed{}, err
	}
	if !out.Already && !out.NotCurrent {
		meta, n := t.state()
		out.Version = n
		if s := meta.CurrentSnapshot(); s != nil {
			out.Snapshot = s.SnapshotID
		}
	}
	return out, nil
}

// currentFiles returns the data files of base's current snapshot at the locations paths: nil
// when it holds none of them, ErrMetadataInvalid when it holds only some.
func (t *Table) currentFiles(ctx context.Context, base table.Metadata, paths []string) ([]icego.DataFile, error) {
	current, err := dataFiles(base.CurrentSnapshot(), t.fio.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	var out []icego.DataFile
	for _, df := range current {
		if slices.Contains(paths, df.FilePath()) {
			out = append(out, df)
		}
	}
	if len(out) > 0 && len(out) != len(paths) {
		return nil, fmt.Errorf("%w: the current snapshot of %s holds %d of the %d files to replace", ErrMetadataInvalid, t.fio.root, len(out), len(paths))
	}
	return out, nil
}

// Has reports whether a snapshot of the table (as the Table holds it) carries the change id.
func (t *Table) Has(id string) bool { return snapshotWith(t.Metadata(), id) != nil }

// CommitIDs are the change ids the table's snapshots carry, oldest first.
func (t *Table) CommitIDs() []string {
	var ids []string
	for _, s := range t.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Properties[CommitIDKey] != "" {
			ids = append(ids, s.Summary.Properties[CommitIDKey])
		}
	}
	return ids
}

func snapshotWith(meta table.Metadata, id string) *table.Snapshot {
	for _, s := range meta.Snapshots() {
		if s.Summary != nil && s.Summary.Properties[CommitIDKey] == id {
			return &s
		}
	}
	return nil
}

func fileNames(files []File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

// dataFiles makes the table's data files of files against meta's schema: from each footer
// given, reading nothing; the others' footers are read from the store, four at a time.
func (t *Table) dataFiles(ctx context.Context, meta table.Metadata, files []File) ([]icego.DataFile, error) {
	schema, spec := meta.CurrentSchema(), meta.PartitionSpec()
	out := make([]icego.DataFile, len(files))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, f := range files {
		g.Go(func() error {
			var df icego.DataFile
			var err error
			if f.Footer != nil {
				df, err = table.DataFileFromMetadata(table.DataFileArgs{
					Schema: schema, Spec: spec, Format: icego.ParquetFile, Metadata: f.Footer,
					FilePath: f.Path, FileSize: f.Size, Content: icego.EntryContentData,
					Properties: meta.Properties(), FormatVersion: meta.Version(),
				})
			} else {
				df, err = table.FileToDataFile(gctx, t.fio.WithContext(gctx), f.Path, schema, spec, 0, meta.Properties())
			}
			var se *store.Error
			switch {
			case errors.As(err, &se):
				return fmt.Errorf("data file %s: %w", f.Path, err)
			case err != nil:
				return fmt.Errorf("%w: data file %s: %w", ErrSchemaChanged, f.Path, err)
			}
			out[i] = df
			return nil
		})
	}
	return out, g.Wait()
}

// evolve stages on tx the columns of schema the table (base) lacks, and refuses every other
// difference (diffSchema). It returns the number of columns added.
func evolve(tx *table.Transaction, base table.Metadata, schema *arrow.Schema) (int, error) {
	if schema == nil {
		return 0, nil
	}
	adds, err := diffSchema(base.CurrentSchema(), schema)
	if err != nil || len(adds) == 0 {
		return 0, err
	}
	u := tx.UpdateSchema(true, false, table.WithNameMapping(base.NameMapping()))
	for _, f := range adds {
		u = u.AddColumn([]string{f.Name}, f.Type, "", false, nil)
	}
	if err := u.Commit(); err != nil {
		return 0, fmt.Errorf("%w: adding %d column(s): %w", ErrSchemaChanged, len(adds), err)
	}
	return len(adds), nil
}

// diffSchema returns the columns of schema that cur lacks, as optional fields, and
// ErrSchemaChanged naming every other difference: a column of cur that schema lacks, or has
// with another type, or a type Iceberg has none for.
func diffSchema(cur *icego.Schema, schema *arrow.Schema) ([]icego.NestedField, error) {
	var adds []icego.NestedField
	var problems []string
	seen := map[string]bool{}
	for _, f := range schema.Fields() {
		seen[f.Name] = true
		typ, err := table.ArrowTypeToIceberg(f.Type, false)
		if err != nil {
			problems = append(problems, fmt.Sprintf("column %q: %s has no Iceberg type (%v)", f.Name, f.Type, err))
			continue
		}
		have, ok := cur.FindFieldByName(f.Name)
		switch {
		case !ok:
			adds = append(adds, icego.NestedField{Name: f.Name, Type: typ})
		case !have.Type.Equals(typ):
			problems = append(problems, fmt.Sprintf("column %q is %s in the table, %s in the files", f.Name, have.Type, typ))
		}
	}
	for _, f := range cur.Fields() {
		if !seen[f.Name] {
			problems = append(problems, fmt.Sprintf("column %q of the table is not in the files", f.Name))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrSchemaChanged, strings.Join(problems, "; "))
	}
	return adds, nil
}

// CheckSchema returns ErrSchemaChanged when files of schema could not be committed to the
// table as it is (Change.Schema): a column missing or of another type. New columns are fine.
func (t *Table) CheckSchema(schema *arrow.Schema) error {
	_, err := diffSchema(t.Schema(), schema)
	return err
}

// Created is when the table was created, as its wharf.created-at property says; zero for a
// table another writer made.
func (t *Table) Created() time.Time {
	c, _ := time.Parse(time.RFC3339Nano, t.Metadata().Properties()[createdKey])
	return c
}

// SchemaOf is the Iceberg schema of an Arrow schema, every field given a fresh id (1, 2, …)
// in order; a type Iceberg has none for is ErrSchemaChanged, naming the column.
func SchemaOf(schema *arrow.Schema) (*icego.Schema, error) {
	fields := make([]icego.NestedField, 0, schema.NumFields())
	for i, f := range schema.Fields() {
		typ, err := table.ArrowTypeToIceberg(f.Type, false)
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: %s has no Iceberg type: %w", ErrSchemaChanged, f.Name, f.Type, err)
		}
		fields = append(fields, icego.NestedField{ID: i + 1, Name: f.Name, Type: typ, Required: !f.Nullable})
	}
	return icego.NewSchema(0, fields...), nil
}

// Open loads the table at the location st is opened at, creating it with schema (SchemaOf)
// when there is none: of writers creating it at once, one creates it and the others load it.
func Open(ctx context.Context, st *store.Store, schema *arrow.Schema, opts *Options) (*Table, error) {
	t, err := Load(ctx, st, opts)
	if !errors.Is(err, ErrNoTable) {
		return t, err
	}
	sc, err := SchemaOf(schema)
	if err != nil {
		return nil, err
	}
	t, err = Create(ctx, st, sc, opts)
	if errors.Is(err, ErrTableExists) {
		return Load(ctx, st, opts)
	}
	return t, err
}
