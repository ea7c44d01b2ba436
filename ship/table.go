package ship

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/iceberg"
	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
)

// Tables is ship's iceberg: section: the datasets whose shipped Parquet files are committed
// to an Apache Iceberg table each (package iceberg; the bucket is the catalog), in group
// commits.
type Tables struct {
	// Datasets names the datasets committed to tables; none: no table. Each dataset's table
	// is at its root, {to}/wharf/v1/{pipeline}/{dataset}/, below which its files are.
	Datasets Names `yaml:"datasets" help:"commit the Parquet files of these datasets (comma-separated) to an Iceberg table each, at {to}/wharf/v1/{pipeline}/{dataset}/"`
	// CommitInterval is the longest a shipped file waits for its commit.
	CommitInterval time.Duration `yaml:"commit_interval" help:"with --iceberg-datasets: longest a shipped file waits for its table commit"`
	// CommitFiles is the most files one commit adds; a commit starts as soon as this many wait.
	CommitFiles int `yaml:"commit_files" help:"with --iceberg-datasets: most files one table commit adds (a commit starts once this many wait)"`
	// Catalog, when set, keeps the tables in a SQL catalog (PostgreSQL or SQLite) instead of
	// the bucket, each as {pipeline}.{dataset}: the database makes each commit's
	// compare-and-set, so the store need not be proven cas.
	Catalog *iceberg.CatalogConfig `yaml:"catalog" flag:"-"`
}

// Names is a list of names, written as a YAML list or as one comma-separated string (as a
// flag gives it).
type Names []string

// UnmarshalYAML reads a list, or a comma-separated string.
func (n *Names) UnmarshalYAML(v *yaml.Node) error {
	switch v.Kind {
	case yaml.ScalarNode:
		*n = nil
		for p := range strings.SplitSeq(v.Value, ",") {
			if p = strings.TrimSpace(p); p != "" {
				*n = append(*n, p)
			}
		}
		return nil
	case yaml.SequenceNode:
		var l []string
		if err := v.Decode(&l); err != nil {
			return err
		}
		*n = l
		return nil
	}
	return fmt.Errorf("want a list of names, or names separated by commas")
}

// String writes the names separated by commas.
func (n Names) String() string { return strings.Join(n, ",") }

// Table defaults: a file waits at most 10 s for its commit, and a commit adds at most 100.
const (
	defaultCommitInterval = 10 * time.Second
	defaultCommitFiles    = 100
)

var datasetName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// check validates t: names a spool can hold, each once; an interval; a bound on files.
func (t *Tables) check(replay string) []error {
	if len(t.Datasets) == 0 {
		return nil
	}
	var errs []error
	seen := map[string]bool{}
	for _, d := range t.Datasets {
		switch {
		case !datasetName.MatchString(d):
			errs = append(errs, fmt.Errorf("iceberg.datasets: %q is no dataset a spool holds (1 to 64 of a-z, 0-9, '_', '-')", d))
		case seen[d]:
			errs = append(errs, fmt.Errorf("iceberg.datasets: %q is named twice", d))
		}
		seen[d] = true
	}
	if replay != "" {
		errs = append(errs, errors.New("iceberg.datasets: a replay's files are kept apart from production (wharf/replays/…) and are not committed to its tables: ship the replay without iceberg"))
	}
	if t.CommitInterval <= 0 {
		errs = append(errs, fmt.Errorf("iceberg.commit_interval %s: want more than 0", t.CommitInterval))
	}
	if t.CommitFiles < 1 || t.CommitFiles > 10000 {
		errs = append(errs, fmt.Errorf("iceberg.commit_files %d: want 1 to 10000", t.CommitFiles))
	}
	if t.Catalog != nil {
		if err := t.Catalog.Check("iceberg.catalog"); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Snapshot summary properties of a ship commit, besides iceberg.CommitIDKey.
const (
	summaryNode  = "wharf.node"
	summaryEpoch = "wharf.spool-epoch"
)

// tables commits the shipped Parquet files of Config.Iceberg's datasets to their tables.
//
// A file is committed only after the spool recorded its upload, and its local retention waits
// for its commit (held). Which files a table holds is read from the table, not the spool:
// each commit's id names this spool (node and epoch) and the spool ids of its files, so at
// start the files of the spool the table already holds are known, whatever happened before a
// crash. The id writes the files' sequence numbers as ranges (first-last of consecutive
// files run together: 1-400,9000-9011). A group whose commit failed is retried as it was, under the same id, until the table
// holds it: a file is in at most one snapshot.
type tables struct {
	s   *Shipper
	cfg Tables

	commits, added, rejects *prometheus.CounterVec

	flushing sync.Mutex // one flush at a time

	cat *iceberg.Catalog // Tables.Catalog, once open; nil: the bucket is the catalog

	mu     sync.Mutex // guards what follows
	byName map[string]*table
	last   error // the last commit's failure, nil after a success
}

// table is one dataset's table.
type table struct {
	dataset string
	st      *store.Store // at the table's location
	tbl     *iceberg.Table
	// in: the ids of the spool's files the table holds (of those the spool still keeps);
	// out: files left out (not Parquet, or a schema the table cannot take).
	in, out map[uint64]bool
	// pending is the group whose commit failed: it is retried as it is, first.
	pending *group
	retry   time.Time // not before
	fails   int
	version int
	snap    int64
	files   int64 // files committed since the start
	nwait   int   // files waiting for a commit at the last flush
}

// group is the files of one commit.
type group struct {
	id     string
	files  []spool.File
	schema *arrow.Schema
	ice    []iceberg.File
}

func newTables(s *Shipper) *tables {
	t := &tables{s: s, cfg: s.cfg.Iceberg, byName: map[string]*table{},
		commits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wharf_ship_table_commits_total",
			Help: "Iceberg commits of shipped files by dataset and outcome: ok, already (the table held the group: a commit whose answer was lost), retry."}, []string{"dataset", "outcome"}),
		added: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wharf_ship_table_files_total",
			Help: "Shipped Parquet files committed to the dataset's Iceberg table."}, []string{"dataset"}),
		rejects: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wharf_ship_table_rejected_files_total",
			Help: "Shipped files left out of the dataset's Iceberg table: not Parquet, or a schema the table cannot take (they stay in the bucket)."}, []string{"dataset"}),
	}
	for _, d := range t.cfg.Datasets {
		t.byName[d] = &table{dataset: d, in: map[uint64]bool{}, out: map[uint64]bool{}}
		t.added.WithLabelValues(d)
		t.rejects.WithLabelValues(d)
	}
	s.m.reg.MustRegister(t.commits, t.added, t.rejects)
	return t
}

// datasetRoot is the key of a dataset's root below the destination: its table's location.
func (s *Shipper) datasetRoot(dataset string) string {
	return "wharf/v1/" + s.cfg.Pipeline + "/" + dataset + "/"
}

// commitPrefix starts the commit id of every group of this spool.
func (s *Shipper) commitPrefix() string {
	return fmt.Sprintf("ship/%s/%016x/", s.cfg.Node, s.epoch)
}

// open loads each table (a table not made yet is made by its first commit) and learns which
// of the spool's retained files each holds. The store must be proven to enforce conditional
// writes: a table's commit is a create-if-absent.
func (t *tables) open(ctx context.Context) error {
	s := t.s
	s.mu.Lock()
	res := s.stat.probe
	s.mu.Unlock()
	if t.cfg.Catalog != nil {
		if t.cat == nil {
			getenv := s.cfg.Store.Getenv
			if getenv == nil {
				getenv = func(string) string { return "" }
			}
			cat, err := iceberg.OpenCatalog(ctx, t.cfg.Catalog, getenv)
			if err != nil {
				return fmt.Errorf("iceberg tables: %w", err)
			}
			t.cat = cat
		}
	} else if res == nil {
		return fmt.Errorf("iceberg tables: the store was not probed")
	} else if err := res.RequireCAS(); err != nil {
		return fmt.Errorf("iceberg tables under %s: %w", s.loc, err)
	}
	retained := s.sp.Retained()
	for _, d := range t.cfg.Datasets {
		tb := t.byName[d]
		tb.st = s.st.Sub(s.datasetRoot(d))
		tbl, err := iceberg.Load(ctx, tb.st, t.options(d))
		switch {
		case errors.Is(err, iceberg.ErrNoTable):
			continue
		case err != nil:
			return fmt.Errorf("iceberg table %s: %w", tb.st.Describe().Location, err)
		}
		tb.tbl, tb.version = tbl, tbl.Version()
		if c := tbl.CurrentSnapshot(); c != nil {
			tb.snap = c.SnapshotID
		}
		var done []seqRange
		for _, id := range tbl.CommitIDs() {
			if r, ok := strings.CutPrefix(id, s.commitPrefix()); ok {
				done = append(done, parseRanges(r)...)
			}
		}
		slices.SortFunc(done, func(a, b seqRange) int { return cmp.Compare(a.first, b.first) })
		expired, oldest := expiredBefore(tbl)
		for _, f := range retained {
			switch {
			case f.Dataset != d:
			case covered(done, f):
				tb.in[f.ID] = true
			case expired && f.Ext == "parquet" && f.UploadedAt.Before(oldest.Add(expiryMargin)):
				// Its commit, if it had one, may be among the snapshots expired: committing it
				// again could put it in the table twice.
				t.reject(tb, f, fmt.Errorf("its upload (%s) is older than the table's oldest snapshot (%s) and the snapshots before that were expired, so the table cannot say whether it holds the file; it is not committed again (a file is in at most one snapshot): if the table lacks it, add it by hand",
					f.UploadedAt.UTC().Format(time.RFC3339), oldest.UTC().Format(time.RFC3339)))
			}
		}
		s.log.Info("iceberg table", "dataset", d, "location", tb.st.Describe().Location, "version", tb.version,
			"retained_in_table", len(tb.in))
	}
	return nil
}

// expiryMargin is how much later than the table's oldest snapshot a file must have been
// uploaded for its commit to be surely in the history left after an expiry: the clocks of
// the machines that committed may disagree by that much.
const expiryMargin = time.Hour

// expiredBefore reports whether snapshots of tbl were expired (its oldest snapshot names a
// parent the table no longer holds), and the oldest snapshot's time.
func expiredBefore(tbl *iceberg.Table) (bool, time.Time) {
	snaps := tbl.Snapshots()
	if len(snaps) == 0 {
		return false, time.Time{}
	}
	ids := map[int64]bool{}
	oldest := snaps[0]
	for _, s := range snaps {
		ids[s.SnapshotID] = true
		if s.TimestampMs < oldest.TimestampMs {
			oldest = s
		}
	}
	expired := false
	for _, s := range snaps {
		if s.ParentSnapshotID != nil && !ids[*s.ParentSnapshotID] {
			expired = true
		}
	}
	return expired, time.UnixMilli(oldest.TimestampMs)
}

// options are the table options of dataset's table: its catalog and name there, if any.
func (t *tables) options(dataset string) *iceberg.Options {
	if t.cat == nil {
		return nil
	}
	return &iceberg.Options{Catalog: t.cat, Ident: iceberg.Ident{Namespace: t.s.cfg.Pipeline, Name: dataset}}
}

// close closes the catalog's database, if one is open.
func (t *tables) close() {
	if t != nil {
		t.cat.Close()
	}
}

// holds reports whether f's local retention waits for its commit.
func (t *tables) holds(f spool.File) bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	tb := t.byName[f.Dataset]
	return tb != nil && f.Ext == "parquet" && !tb.in[f.ID] && !tb.out[f.ID]
}

// waiting returns, per table, the retained files that wait for a commit, oldest first.
func (t *tables) waiting(retained []spool.File) map[*table][]spool.File {
	out := map[*table][]spool.File{}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, f := range retained {
		tb := t.byName[f.Dataset]
		if tb == nil || f.Ext != "parquet" || tb.in[f.ID] || tb.out[f.ID] {
			continue
		}
		if tb.pending != nil && slices.ContainsFunc(tb.pending.files, func(g spool.File) bool { return g.ID == f.ID }) {
			continue
		}
		out[tb] = append(out[tb], f)
	}
	return out
}

// flush commits what is due: every waiting file when all is set, else a table's files once
// the oldest has waited CommitInterval or CommitFiles wait. A failed group is retried first,
// once its backoff is over. It returns the first failure (the files stay waiting).
func (t *tables) flush(ctx context.Context, all bool) error {
	t.flushing.Lock()
	defer t.flushing.Unlock()
	s := t.s
	now := s.now()
	var first error
	waiting := t.waiting(s.sp.Retained())
	t.mu.Lock()
	for _, tb := range t.byName {
		tb.nwait = len(waiting[tb])
	}
	t.mu.Unlock()
	for tb, files := range waiting {
		if err := t.flushTable(ctx, tb, files, now, all); err != nil && first == nil {
			first = err
		}
	}
	for _, tb := range t.byName {
		t.mu.Lock()
		p := tb.pending
		t.mu.Unlock()
		if p != nil { // a table with nothing new waiting, but a group to retry
			if err := t.flushTable(ctx, tb, nil, now, all); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

func (t *tables) flushTable(ctx context.Context, tb *table, files []spool.File, now time.Time, all bool) error {
	t.mu.Lock()
	pending, retry := tb.pending, tb.retry
	t.mu.Unlock()
	if pending != nil {
		if now.Before(retry) {
			return nil
		}
		if err := t.commit(ctx, tb, pending); err != nil {
			return err
		}
	}
	if len(files) == 0 {
		return nil
	}
	if !all && len(files) < t.cfg.CommitFiles && now.Sub(files[0].UploadedAt) < t.cfg.CommitInterval {
		return nil
	}
	for _, g := range t.groups(tb, files) {
		if err := t.commit(ctx, tb, g); err != nil {
			return err
		}
	}
	return nil
}

// groups reads the footers of files and makes their groups, in id order: files of one schema
// together, at most CommitFiles each. A file that is not Parquet, or whose schema the table
// cannot take, is left out (logged and counted).
func (t *tables) groups(tb *table, files []spool.File) []*group {
	var out []*group
	var cur *group
	for _, f := range files {
		footer, schema, err := readFooter(f.Path)
		if err == nil && tb.tbl != nil {
			err = tb.tbl.CheckSchema(schema)
		}
		if err == nil && cur != nil && !cur.schema.Equal(schema) {
			if err = schemaFollows(cur.schema, schema); err != nil {
				// Files of a schema the group's cannot become: their own table would be needed.
				err = fmt.Errorf("%w: %w", iceberg.ErrSchemaChanged, err)
			}
		}
		if err != nil {
			t.reject(tb, f, err)
			continue
		}
		if cur == nil || !cur.schema.Equal(schema) || len(cur.files) == t.cfg.CommitFiles {
			cur = &group{schema: schema}
			out = append(out, cur)
		}
		rel := strings.TrimPrefix(t.s.key(f), t.s.datasetRoot(tb.dataset))
		cur.files = append(cur.files, f)
		cur.ice = append(cur.ice, iceberg.File{Path: rel, Size: f.Size, Footer: footer})
	}
	for _, g := range out {
		g.id = t.s.commitPrefix() + formatRanges(g.files)
	}
	return out
}

// schemaFollows checks that files of next can follow files of prev in one table: next keeps
// every column of prev, with its type (it may add some).
func schemaFollows(prev, next *arrow.Schema) error {
	for _, f := range prev.Fields() {
		i := next.FieldIndices(f.Name)
		if len(i) == 0 {
			return fmt.Errorf("column %q of earlier files is missing", f.Name)
		}
		if g := next.Field(i[0]); !arrow.TypeEqual(g.Type, f.Type) {
			return fmt.Errorf("column %q is %s in earlier files, %s here", f.Name, f.Type, g.Type)
		}
	}
	return nil
}

// reject leaves f out of its table for good: it stays in the bucket, and its local
// retention goes on.
func (t *tables) reject(tb *table, f spool.File, err error) {
	t.mu.Lock()
	tb.out[f.ID] = true
	t.mu.Unlock()
	t.rejects.WithLabelValues(tb.dataset).Inc()
	err = fmt.Errorf("file %d (%s) is shipped but left out of the iceberg table of dataset %s: %w", f.ID, t.s.where(t.s.key(f)), tb.dataset, err)
	t.s.log.Error("left out of the table", "file_id", f.ID, "dataset", tb.dataset, "key", t.s.where(t.s.key(f)),
		"code", errcode.NameOf(err), "error", err)
	t.s.mu.Lock()
	t.s.noteLocked(&ErrorInfo{Time: t.s.now().UTC(), Message: err.Error(), Code: errcode.NameOf(err), FileID: f.ID})
	t.s.mu.Unlock()
}

// commit commits g to tb (making the table with g's schema when there is none). On failure g
// is kept to be retried as it is, after a backoff.
func (t *tables) commit(ctx context.Context, tb *table, g *group) error {
	s := t.s
	start := s.now()
	c, err := t.commitOnce(ctx, tb, g)
	if errors.Is(err, iceberg.ErrSchemaChanged) {
		// The table changed under the group (another machine's files evolved it otherwise):
		// no attempt committed it (a committed group is found by its id first), and none
		// will. Its files are left out, named, rather than retried for ever.
		t.mu.Lock()
		tb.pending, tb.fails = nil, 0
		t.mu.Unlock()
		for _, f := range g.files {
			t.reject(tb, f, err)
		}
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		tb.pending = g
		tb.fails++
		tb.retry = s.now().Add(s.cfg.Retry.Delay(tb.fails, s.rnd))
		t.last = err
		t.commits.WithLabelValues(tb.dataset, "retry").Inc()
		return fmt.Errorf("iceberg table of dataset %s: committing %d file(s) (%s): %w", tb.dataset, len(g.files), g.id, err)
	}
	tb.pending, tb.fails, t.last = nil, 0, nil
	for _, f := range g.files {
		tb.in[f.ID] = true
	}
	tb.nwait = max(tb.nwait-len(g.files), 0)
	tb.version, tb.snap = c.Version, c.Snapshot
	outcome := "ok"
	if c.Already {
		outcome = "already"
	} else {
		tb.files += int64(len(g.files))
		t.added.WithLabelValues(tb.dataset).Add(float64(len(g.files)))
	}
	t.commits.WithLabelValues(tb.dataset, outcome).Inc()
	s.log.Info("committed to the table", "dataset", tb.dataset, "files", len(g.files), "version", c.Version,
		"snapshot_id", c.Snapshot, "outcome", outcome, "commit_id", g.id, "duration", s.now().Sub(start))
	return nil
}

func (t *tables) commitOnce(ctx context.Context, tb *table, g *group) (iceberg.Committed, error) {
	if tb.tbl == nil {
		tbl, err := iceberg.Open(ctx, tb.st, g.schema, t.options(tb.dataset))
		if err != nil {
			return iceberg.Committed{}, err
		}
		tb.tbl = tbl
	}
	return tb.tbl.Commit(ctx, iceberg.Change{ID: g.id, Files: g.ice, Schema: g.schema, Summary: map[string]string{
		summaryNode: t.s.cfg.Node, summaryEpoch: fmt.Sprintf("%016x", t.s.epoch)}})
}

// run commits what is due every poll interval until ctx ends.
func (t *tables) run(ctx context.Context) {
	seen := int64(-1)
	for {
		// A flush reads the spool's retained files: only when a file was shipped since the
		// last, or files wait (for their time, or a retry).
		if n := t.s.Status().Uploaded; n != seen || !t.quiet() {
			seen = n
			if err := t.flush(ctx, false); err != nil && ctx.Err() == nil {
				t.s.log.Warn("table commit failed; will retry", "code", errcode.NameOf(err), "error", err)
				t.s.mu.Lock()
				t.s.noteLocked(&ErrorInfo{Time: t.s.now().UTC(), Message: err.Error(), Code: errcode.NameOf(err)})
				t.s.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(min(t.s.cfg.PollInterval, t.cfg.CommitInterval)):
		}
	}
}

// TableStatus is one dataset's table, as /status shows it.
type TableStatus struct {
	Dataset   string `json:"dataset"`
	Location  string `json:"location"`
	Version   int    `json:"version"`               // N of its current metadata/vN.metadata.json; 0 before the first commit
	Snapshot  int64  `json:"snapshot_id,omitempty"` // its current snapshot
	Committed int64  `json:"committed"`             // files committed since the start
	Waiting   int    `json:"waiting"`               // shipped files waiting for a commit, as the last flush counted them
	Rejected  int    `json:"rejected"`              // files left out since the start
}

func (t *tables) status() []TableStatus {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []TableStatus
	for _, d := range t.cfg.Datasets {
		tb := t.byName[d]
		loc := ""
		if tb.st != nil {
			loc = tb.st.Describe().Location
		}
		w := tb.nwait
		if tb.pending != nil {
			w += len(tb.pending.files)
		}
		out = append(out, TableStatus{Dataset: d, Location: loc, Version: tb.version, Snapshot: tb.snap,
			Committed: tb.files, Waiting: w, Rejected: len(tb.out)})
	}
	return out
}

// readFooter reads the footer of the Parquet file at path, and its Arrow schema.
func readFooter(path string) (*metadata.FileMetaData, *arrow.Schema, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("its local copy %s is gone (removed by something other than wharf), so its footer cannot be read", path)
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r, err := file.NewParquetReader(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: not a Parquet file: %v", iceberg.ErrSchemaChanged, err)
	}
	defer r.Close()
	md := r.MetaData()
	schema, err := pqarrow.FromParquet(md.Schema, nil, md.KeyValueMetadata())
	if err != nil {
		return nil, nil, fmt.Errorf("%w: its Parquet schema has no Arrow form: %v", iceberg.ErrSchemaChanged, err)
	}
	return md, schema, nil
}

// seqRange is the sequence numbers first to last of files committed together.
type seqRange struct{ first, last uint64 }

// formatRanges writes the sequence numbers of files (ascending) as ranges, files that follow
// each other run together: 1-400,9000-9011.
func formatRanges(files []spool.File) string {
	var b strings.Builder
	for i := 0; i < len(files); {
		j := i
		for j+1 < len(files) && files[j+1].First == files[j].Last+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(files[i].First, 10))
		b.WriteByte('-')
		b.WriteString(strconv.FormatUint(files[j].Last, 10))
		i = j + 1
	}
	return b.String()
}

// parseRanges reads what formatRanges wrote; what does not parse is skipped.
func parseRanges(s string) []seqRange {
	var out []seqRange
	for r := range strings.SplitSeq(s, ",") {
		lo, hi, _ := strings.Cut(r, "-")
		a, err1 := strconv.ParseUint(lo, 10, 64)
		b, err2 := strconv.ParseUint(hi, 10, 64)
		if err1 == nil && err2 == nil && a <= b {
			out = append(out, seqRange{a, b})
		}
	}
	return out
}

// covered reports whether f's sequence numbers are within one of done (sorted by first).
func covered(done []seqRange, f spool.File) bool {
	i, _ := slices.BinarySearchFunc(done, f.First, func(r seqRange, n uint64) int { return cmp.Compare(r.first, n) })
	// done[i-1] is the last range starting at or before f.First (or done[i] starts at it).
	for _, j := range []int{i, i - 1} {
		if j >= 0 && j < len(done) && done[j].first <= f.First && f.Last <= done[j].last {
			return true
		}
	}
	return false
}

// quiet reports whether, at the last flush, no file waited for a commit and no group for a
// retry.
func (t *tables) quiet() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tb := range t.byName {
		if tb.nwait > 0 || tb.pending != nil {
			return false
		}
	}
	return true
}

// idle reports whether no shipped file waits for a commit.
func (t *tables) idle() bool {
	if t == nil {
		return true
	}
	if len(t.waiting(t.s.sp.Retained())) > 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tb := range t.byName {
		if tb.pending != nil {
			return false
		}
	}
	return true
}

// start runs the commits beside the upload loop until the returned stop is called; stop
// returns once no flush is under way.
func (t *tables) start(ctx context.Context) (stop func()) {
	if t == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.run(ctx)
	}()
	return func() { cancel(); <-done }
}

// final commits what waits at a stop, within the grace period; what it cannot commit is
// committed by the next run.
func (t *tables) final(ctx context.Context) {
	if t == nil {
		return
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(t.s.cfg.Grace, time.Second))
	defer cancel()
	if err := t.flush(fctx, true); err != nil {
		t.s.log.Warn("table commit at the stop failed; the next run commits these files", "code", errcode.NameOf(err), "error", err)
	}
}
