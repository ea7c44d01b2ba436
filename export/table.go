package export

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/iceberg"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// TableConfig is an export's iceberg: section: the Apache Iceberg table every certified run
// of the export is committed to, as one snapshot, after its _SUCCESS (package iceberg; the
// bucket is the catalog).
type TableConfig struct {
	// Location is the table's store URL, opened with the export's store options. Empty: the
	// destination's root, its part before the first {date} or {run_id} up to a '/', with
	// {export} and {table} filled in (s3://lake/{export}/{date}/ gives s3://lake/orders/).
	// Every part the export writes must be below it: a table's data files are below its
	// location.
	Location string `yaml:"location"`
	// Catalog, when set, keeps the table in a SQL catalog (PostgreSQL or SQLite) instead of
	// the bucket (CatalogConfig); Namespace and Name are its name there (default "default"
	// and the export's name). Without a catalog they are refused.
	Catalog   *iceberg.CatalogConfig `yaml:"catalog"`
	Namespace string                 `yaml:"namespace"`
	Name      string                 `yaml:"name"`
}

// Snapshot summary properties of a run's commit.
const (
	summaryRunID  = "wharf.run-id"
	summaryExport = "wharf.export"
	// summaryRunStarted is when the run started (RFC 3339, nanoseconds): what orders two runs.
	summaryRunStarted = "wharf.run-started"
	// summaryRepairID names the repair whose new parts a snapshot put in place of the old.
	summaryRepairID = "wharf.repair-id"
)

// TableCommit is what a run's Iceberg commit did (Result.Table).
type TableCommit struct {
	Location string `json:"location"`
	Version  int    `json:"version"` // N of the table's metadata/vN.metadata.json holding the run
	Snapshot int64  `json:"snapshot_id"`
	// Already: the table held the run before this commit (a commit whose answer was lost).
	Already bool `json:"already,omitempty"`
	// CaughtUp are earlier certified runs (delta) the table lacked, committed first, oldest first.
	CaughtUp []string `json:"caught_up,omitempty"`
	// Empty: a delta run with no rows, which adds no snapshot (Snapshot is 0).
	Empty bool `json:"empty,omitempty"`
	// Catalog and Metadata, for a table a SQL catalog keeps (TableConfig.Catalog): its name
	// there (namespace.name) and the metadata file of the version committed.
	Catalog  string `json:"catalog,omitempty"`
	Metadata string `json:"metadata,omitempty"`
}

// TableLocation returns the location of e's Iceberg table: TableConfig.Location, or the
// destination's root. It is "" when e has no iceberg: section.
func TableLocation(e *Export) (string, error) {
	if e.Iceberg == nil {
		return "", nil
	}
	loc := e.Iceberg.Location
	if loc == "" {
		v := e.VarsFor(time.Time{}, "")
		d := strings.NewReplacer("{export}", v.Export, "{table}", v.Table).Replace(e.Destination)
		root, _, templated := strings.Cut(d, "{")
		if templated {
			root = root[:strings.LastIndex(root, "/")+1]
		}
		loc = root
	}
	if strings.Contains(loc, "{") {
		return "", newErr("config", e.Name+".iceberg.location", ErrConfig, fmt.Errorf("%q: a table's location has no placeholders", loc))
	}
	if loc == "" || loc == "-" {
		return "", newErr("config", e.Name+".iceberg.location", ErrConfig, fmt.Errorf("the destination %q has no fixed part to keep a table in: give iceberg.location", e.Destination))
	}
	return strings.TrimRight(loc, "/") + "/", nil
}

// checkTable validates the iceberg: section: Parquet parts, kept in place, below the table.
func (e *Export) checkTable(bad func(field, format string, a ...any) error) error {
	if e.Iceberg == nil {
		return nil
	}
	if e.Format != FormatParquet {
		return bad("iceberg", "an Iceberg table's data files are Parquet: format %s cannot be committed", e.Format)
	}
	if e.Superseded == SupersededMove {
		return bad("iceberg", "superseded: move would take earlier runs' parts from under the table's snapshots (a reader of the table reads only its current files anyway): use superseded: keep")
	}
	if err := e.checkCatalog(bad); err != nil {
		return err
	}
	loc, err := TableLocation(e)
	if err != nil {
		return err
	}
	v := e.VarsFor(time.Time{}, "")
	sample, err := Expand(e.Destination, Vars{Date: "2006-01-02", Table: v.Table, Export: v.Export, RunID: "r"})
	if err != nil {
		return err
	}
	if !strings.HasPrefix(strings.TrimRight(sample, "/")+"/", loc) {
		return bad("iceberg.location", "the parts are written to %s, not below the table's location %s", e.Destination, loc)
	}
	return nil
}

// tableRun is what a run keeps for its Iceberg commit.
type tableRun struct {
	loc     string
	st      *store.Store
	tbl     *iceberg.Table
	cat     *iceberg.Catalog               // the SQL catalog keeping the table; nil: the bucket does
	footers map[int]*metadata.FileMetaData // by chunk, of the parts this attempt wrote
}

// openTable opens (or creates) e's table before the run writes anything, so that a store not
// proven to enforce conditional writes, or a schema the table cannot take, stops the run
// before its first part.
func (r *runner) openTable(ctx context.Context) error {
	loc, err := TableLocation(r.e)
	if err != nil || loc == "" {
		return err
	}
	st, err := store.Open(ctx, loc, r.storeConfig())
	if err != nil {
		return err
	}
	opts, cat, err := tableOptions(ctx, r.e, st, r.o.Getenv, r.o.Verdicts)
	if err != nil {
		st.Close()
		return fmt.Errorf("iceberg table %s: %w", loc, err)
	}
	if opts == nil {
		opts = &iceberg.Options{}
	}
	// The run commits long after this load: the commit's create-if-absent, not a HEAD now,
	// is what finds a version made meanwhile.
	opts.FromHint = true
	tbl, err := iceberg.Open(ctx, st, schemaOf(r.cols), opts)
	if err == nil {
		err = tbl.CheckSchema(schemaOf(r.cols))
	}
	if err != nil {
		st.Close()
		cat.Close()
		return fmt.Errorf("iceberg table %s: %w", loc, cat.Scrub(err))
	}
	r.table = &tableRun{loc: loc, st: st, tbl: tbl, cat: cat, footers: map[int]*metadata.FileMetaData{}}
	return nil
}

// close releases the table's store and catalog.
func (t *tableRun) close() {
	t.st.Close()
	t.cat.Close()
}

func (r *runner) keepFooter(chunk int, f *metadata.FileMetaData) {
	if r.table == nil || f == nil {
		return
	}
	r.wroteMu.Lock()
	r.table.footers[chunk] = f
	r.wroteMu.Unlock()
}

// commitTable commits the certified run to the table: a full run's parts replace the
// table's files, a delta run's are appended. A delta export's earlier certified runs that
// the table lacks (a run that stopped between its _SUCCESS and its commit) are appended
// first, oldest first, each as its own snapshot. Each commit carries its run id, so a run in
// the table is never committed twice.
func (r *runner) commitTable(ctx context.Context) error {
	if r.table == nil {
		return nil
	}
	t := r.table
	// A holder fenced past (state: bucket) commits nothing: the log may have revoked its run,
	// whose window the next holder exports again; the next holder commits what is certified.
	if err := r.j.held(ctx); err != nil {
		return r.tableErr(err)
	}
	out := &TableCommit{Location: t.loc}
	if t.cat != nil {
		out.Catalog = t.cat.Name() + ":" + r.e.tableIdent().String()
	}
	if r.e.Mode == ModeDelta {
		pending, err := r.pendingRuns(ctx)
		if err != nil {
			return r.tableErr(err)
		}
		for _, p := range pending {
			already, err := r.catchUp(ctx, p)
			if err != nil {
				return r.tableErr(fmt.Errorf("committing the earlier run %s: %w", p.RunID, err))
			}
			if !already { // a version the load did not see may have held it
				out.CaughtUp = append(out.CaughtUp, p.RunID)
			}
		}
	}
	files, err := r.tableFiles(r.rec.Prefix, r.res.Parts, t.footers)
	if err != nil {
		return r.tableErr(err)
	}
	if r.e.Mode == ModeDelta && len(files) == 0 {
		// No rows in the window: nothing to append (a full run of no rows does empty the table).
		// The version reported is the table's current one, read now: the load (from the hint,
		// before the run) may have been behind it.
		if err := t.tbl.Refresh(ctx); err != nil {
			r.o.log().Warn("export: the iceberg table's current version could not be read; reporting the version loaded before the run",
				"export", r.e.Name, "table", t.loc, "err", t.cat.Scrub(err))
		}
		out.Version, out.Empty = t.tbl.Version(), true
		out.Metadata = metadataIfCataloged(t.cat, t.tbl)
		r.res.Table = out
		return nil
	}
	ch := iceberg.Change{
		ID: r.rec.RunID, Overwrite: r.e.Mode == ModeFull, Files: files, Schema: schemaOf(r.cols),
		Summary: map[string]string{summaryRunID: r.rec.RunID, summaryExport: r.e.Name,
			summaryRunStarted: r.rec.StartedAt.UTC().Format(time.RFC3339Nano)},
	}
	if ch.Overwrite {
		ch.Guard = r.notBehind
	}
	c, err := t.tbl.Commit(ctx, ch)
	if err != nil {
		return r.tableErr(err)
	}
	out.Version, out.Snapshot, out.Already = c.Version, c.Snapshot, c.Already
	out.Metadata = metadataIfCataloged(t.cat, t.tbl)
	r.res.Table = out
	r.o.log().Info("export: run committed to its iceberg table", "export", r.e.Name, "run_id", r.rec.RunID,
		"table", t.loc, "version", c.Version, "snapshot_id", c.Snapshot, "already", c.Already)
	return nil
}

// notBehind refuses a full run's overwrite of a table whose current snapshot is a later run's
// (run ids sort by their start): a run that stalled after its _SUCCESS must not put its older
// rows back over a newer run's.
func (r *runner) notBehind(current map[string]string) error {
	if later := current[summaryRunID]; later != "" && later != r.rec.RunID && startedAfter(current, r.rec.StartedAt) {
		return fmt.Errorf("%w: the table's current snapshot is of run %s, which started after run %s: not replaced by the older run's parts", iceberg.ErrStaleCommit, later, r.rec.RunID)
	}
	return nil
}

// startedAfter reports whether the run of a snapshot's summary started after t: by its
// wharf.run-started, or, in a summary without it, by the second its run id names (two runs
// of one second are not ordered by their ids' random part).
func startedAfter(summary map[string]string, t time.Time) bool {
	if s, err := time.Parse(time.RFC3339Nano, summary[summaryRunStarted]); err == nil {
		return s.After(t)
	}
	id, _, _ := strings.Cut(summary[summaryRunID], "-")
	s, err := time.Parse("20060102T150405Z", id)
	return err == nil && s.After(t.Truncate(time.Second))
}

func (r *runner) tableErr(err error) error {
	return fmt.Errorf("run %s is certified at its prefix, but its commit to the iceberg table %s did not complete (the next run finds it there, or commits it): %w",
		r.rec.RunID, r.table.loc, r.table.cat.Scrub(err))
}

// tableFiles are parts, written at prefix, as the table's data files: keys relative to the
// table's location, with the footers this run kept.
func (r *runner) tableFiles(prefix string, parts []Part, footers map[int]*metadata.FileMetaData) ([]iceberg.File, error) {
	rel, ok := strings.CutPrefix(strings.TrimRight(prefix, "/")+"/", r.table.loc)
	if !ok {
		return nil, fmt.Errorf("%w: the run's prefix %s is not below the table's location %s", iceberg.ErrOutsideTable, prefix, r.table.loc)
	}
	files := make([]iceberg.File, len(parts))
	for i, p := range parts {
		files[i] = iceberg.File{Path: rel + p.Key, Size: p.Size, Footer: footers[p.Chunk]}
	}
	return files, nil
}

// pendingRuns are the export's runs, other than this one, that succeeded after the table was
// created and that the table does not hold, oldest first.
func (r *runner) pendingRuns(ctx context.Context) ([]RunRecord, error) {
	created := r.table.tbl.Created()
	if created.IsZero() {
		return nil, nil
	}
	runs, err := r.j.Runs(ctx, r.e.Name, 0)
	if err != nil {
		return nil, err
	}
	var out []RunRecord
	for _, p := range runs { // newest first
		if p.RunID == r.rec.RunID || p.Status != StatusSucceeded || p.FinishedAt.Before(created) {
			continue
		}
		if r.table.tbl.Has(p.RunID) {
			break // the runs before it were committed before it
		}
		out = append(out, p)
	}
	slices.Reverse(out)
	return out, nil
}

// catchUp commits the earlier run p, from its certified manifest: its parts' footers are
// read from the store. It reports whether the table turned out to hold p already (a version
// made since the table was loaded).
func (r *runner) catchUp(ctx context.Context, p RunRecord) (already bool, err error) {
	st, err := store.Open(ctx, p.Prefix, r.storeConfig())
	if err != nil {
		return false, err
	}
	defer st.Close()
	v, err := dataset.Validate(ctx, st, p.Prefix, false, dataset.StoreOpener(r.storeConfig()))
	if err != nil {
		return false, err
	}
	if !v.Certified || v.RunID != p.RunID {
		return false, errors.New("its prefix " + p.Prefix + " is not certified for it (validate it; a later run of another prefix may have replaced it)")
	}
	files, err := r.tableFiles(p.Prefix, v.Manifest.Parts, nil)
	if err != nil {
		return false, err
	}
	c, err := r.table.tbl.Commit(ctx, iceberg.Change{ID: p.RunID, Files: files,
		Summary: map[string]string{summaryRunID: p.RunID, summaryExport: r.e.Name,
			summaryRunStarted: p.StartedAt.UTC().Format(time.RFC3339Nano)}})
	return c.Already, err
}

// CommitRepair commits to e's Iceberg table the last repair m (a certified manifest at
// prefix) records: the repair's new parts replace the parts they superseded, in one overwrite
// snapshot carrying the repair's id, so the table reads what the repaired manifest lists. It
// is nil, nil when e has no table, when m records no repair, and when the table's current
// snapshot holds none of the superseded parts (a later full run replaced them). A repair the
// table already holds is not committed again (TableCommit.Already), so a repair run again
// after a crash between its _SUCCESS and this commit completes it. The table's store must be
// proven cas (verdicts remembers verdicts; nil probes).
func CommitRepair(ctx context.Context, e *Export, prefix string, m *dataset.Manifest, getenv func(string) string, verdicts *probe.Verdicts) (*TableCommit, error) {
	if e.Iceberg == nil || len(m.Repairs) == 0 {
		return nil, nil
	}
	loc, err := TableLocation(e)
	if err != nil {
		return nil, err
	}
	c := e.Store
	if c.Getenv == nil {
		c.Getenv = getenv
	}
	c.RequireAllow = true
	st, err := store.Open(ctx, loc, &c)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	opts, cat, err := tableOptions(ctx, e, st, getenv, verdicts)
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: %w", loc, err)
	}
	defer cat.Close()
	tbl, err := iceberg.Load(ctx, st, opts)
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: %w", loc, cat.Scrub(err))
	}
	rel, ok := strings.CutPrefix(strings.TrimRight(prefix, "/")+"/", loc)
	if !ok {
		return nil, fmt.Errorf("%w: the prefix %s is not below the table's location %s", iceberg.ErrOutsideTable, prefix, loc)
	}
	last := m.Repairs[len(m.Repairs)-1]
	var remove []string
	var files []iceberg.File
	for _, sp := range m.Superseded {
		if sp.RepairID != last.ID {
			continue
		}
		remove = append(remove, rel+sp.Key)
		i := slices.IndexFunc(m.Parts, func(p Part) bool { return p.Key == sp.By })
		if i < 0 {
			return nil, fmt.Errorf("%w: the manifest at %s names %s as replacing %s, and does not list it", dataset.ErrVerifyManifestRead, prefix, sp.By, sp.Key)
		}
		files = append(files, iceberg.File{Path: rel + sp.By, Size: m.Parts[i].Size})
	}
	out, err := tbl.Commit(ctx, iceberg.Change{ID: last.ID, Files: files, Remove: remove,
		Summary: map[string]string{summaryRunID: m.RunID, summaryRepairID: last.ID, summaryExport: e.Name}})
	if err != nil || out.NotCurrent {
		return nil, cat.Scrub(err)
	}
	return &TableCommit{Location: loc, Version: out.Version, Snapshot: out.Snapshot, Already: out.Already,
		Metadata: metadataIfCataloged(cat, tbl)}, nil
}
