package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store"
)

// StateBucket, as Config.State (the config file's state: key) and Options.StatePath, keeps
// the journal, chunk progress and delta cursors in each export's commit log at its
// destination, under a writer lease named after the export, instead of a local state file.
const StateBucket = "bucket"

// LogKind is the kind of the entries of an export's commit log.
const LogKind = dataset.LogKind

// checkpointEvery bounds how often chunk progress is committed to the log during a run: a
// run shorter than this commits once, at its end. Progress not yet committed when a run
// dies is redone on resume (its parts are quarantined and rewritten, as M9 says).
const checkpointEvery = 10 * time.Second

// maxLoggedRuns bounds the runs each log entry carries (`wharf runs` shows them).
const maxLoggedRuns = 200

// bucketState is what each entry of an export's log holds: the whole journal of the export
// as of that commit.
type bucketState struct {
	Runs         []RunRecord   `json:"runs"`             // oldest first
	Chunks       []ChunkRecord `json:"chunks,omitempty"` // of the last run
	PlanComplete bool          `json:"plan_complete,omitempty"`
	// Schema is the columns the run SchemaRun writes its parts with.
	SchemaRun string         `json:"schema_run,omitempty"`
	Schema    []SchemaColumn `json:"schema,omitempty"`
	Cursor    *loggedCursor  `json:"cursor,omitempty"`
	// Certifies is set on the entry that records a succeeded run's manifest.
	Certifies *Certificate `json:"certifies,omitempty"`

	// Definition is the definition the run DefinitionRun was started with.
	DefinitionRun string      `json:"definition_run,omitempty"`
	Definition    *Definition `json:"definition,omitempty"`
}

type loggedCursor struct {
	Column string `json:"column"`
	Value  Bound  `json:"value"`
	RunID  string `json:"run_id"`
}

// Certificate is what the log records of a succeeded run: validate certifies a logged
// manifest only when the entry its LogRef names is committed and holds this.
type Certificate struct {
	RunID          string `json:"run_id"`
	Prefix         string `json:"prefix"`
	ManifestSHA256 string `json:"manifest_sha256"`
	// Before is the delta cursor before the run advanced it: the cursor again should the
	// run's manifest turn out never to have been written (settle).
	Before *loggedCursor `json:"before,omitempty"`
	// Repair is set when the manifest certified is a repair's (LogHold.Recertify): the
	// manifest it replaces, whose sha256 is Replaces, still certifies the run should the
	// repair's never have been written.
	Repair   string `json:"repair,omitempty"`
	Replaces string `json:"replaces_sha256,omitempty"`
}

// key names what c certifies in the lease record's Settled: the run, or the run as a
// repair left it.
func (c *Certificate) key() string {
	if c.Repair != "" {
		return c.RunID + " repair " + c.Repair
	}
	return c.RunID
}

// leaseState is what an export keeps in its lease record (the release writes it, in the one
// request it makes anyway): the last run whose certificate was found true at its prefix, so
// that the next acquisition need not look again.
type leaseState struct {
	Settled string `json:"settled,omitempty"`
}

// StateRoot is where an export with state: bucket keeps its lease and log: the part of its
// destination before the first placeholder, up to the last '/' (s3://lake/orders/{date}/
// gives s3://lake/orders/).
func StateRoot(e *Export) (string, error) {
	root, _, templated := strings.Cut(e.Destination, "{")
	if templated {
		root = root[:strings.LastIndex(root, "/")+1]
	}
	loc, err := store.ParseURL(root)
	if err != nil || loc.Bucket == "" {
		return "", newErr("config", e.Name+".destination", ErrConfig,
			fmt.Errorf("state: bucket keeps the log below the destination's fixed part, and %q has none (a placeholder in the bucket name?)", e.Destination))
	}
	return root, nil
}

// bucketJournal is the journal of one export kept in its commit log. It holds the export's
// writer lease from open to Close.
type bucketJournal struct {
	s      *store.Store
	root   string
	h      *lease.Lease
	stop   func() // stops the lease's renewals (Lease.Renewing)
	mu     sync.Mutex
	st     bucketState
	dirty  bool
	last   time.Time // when the journal was last committed
	closed bool
	// certified is the run whose success certify committed: its FinishRun has nothing to add.
	certified string
	// settled is the last run whose manifest and _SUCCESS are known written at its prefix
	// after its certificate was committed: the release records it in the lease record.
	settled string
}

// openBucketJournal takes the export's writer lease in its state root and reads its journal
// from the log. Another node's lease fails *lease.HeldError (exit 75).
func openBucketJournal(ctx context.Context, e *Export, o *Options, sc *store.Config) (*bucketJournal, error) {
	root, err := StateRoot(e)
	if err != nil {
		return nil, err
	}
	s, err := store.Open(ctx, root, stateConfig(sc))
	if err != nil {
		return nil, err
	}
	j, err := takeJournal(ctx, s, root, e, o)
	if err != nil {
		s.Close()
		return nil, err
	}
	return j, nil
}

func takeJournal(ctx context.Context, s *store.Store, root string, e *Export, o *Options) (*bucketJournal, error) {
	cfg := lease.DefaultConfig()
	cfg.FromEnv(getenvOr(o.Getenv))
	if o.Lease != nil {
		cfg = *o.Lease
	}
	l, err := lease.Open(ctx, s, cfg, &lease.Options{Logger: o.log(), Verdicts: o.Verdicts})
	if err != nil {
		return nil, fmt.Errorf("state: bucket in %s: %w", root, err)
	}
	h, err := l.Acquire(ctx, e.Name)
	if err != nil {
		return nil, err
	}
	j := &bucketJournal{s: s, root: root, h: h, last: time.Now()}
	if err := j.read(ctx); err != nil {
		_ = h.Release(context.WithoutCancel(ctx))
		return nil, err
	}
	j.stop = h.Renewing(ctx)
	return j, nil
}

func getenvOr(g func(string) string) func(string) string {
	if g == nil {
		return func(string) string { return "" }
	}
	return g
}

// read loads the journal from the log's head as this holder's acquisition left it (the lease
// record carries a head of up to lease.InlineMax bytes: no request).
func (j *bucketJournal) read(ctx context.Context) error {
	p := j.h.Pointer()
	if p.Kind != "" && p.Kind != LogKind {
		return errors.Join(lease.ErrCursorKindMismatch, fmt.Errorf("the log %s in %s holds entries of kind %q, not an export's journal", p.Name, j.root, p.Kind))
	}
	e, err := j.h.Head(ctx, LogKind)
	if err != nil || e == nil {
		return err
	}
	if err := json.Unmarshal(e.Data, &j.st); err != nil {
		return newErr("state", j.root+e.Key, ErrState, err)
	}
	c := j.st.Certifies
	j.st.Certifies = nil
	if c == nil {
		return nil
	}
	return j.settle(ctx, c)
}

// settle makes the journal true of the run the log's head certifies. A run's certificate is
// committed before its manifest and _SUCCESS are written (so that a holder fenced past never
// writes them), and a process stopped between the two leaves a journal that says the run
// succeeded — and a delta cursor advanced past its window — at a prefix that is no certified
// export. So unless the lease record says that this run was settled (its holder released the
// lease after writing both: no request), the prefix is read: a manifest with the certified
// sha256 gets its _SUCCESS if that is missing (the run is then what it was journaled as); no
// manifest, or another, makes the run failed with its cause, and puts the cursor back where
// the run found it, committed at once: the next run exports the window again, and --resume
// finishes the run from its parts.
func (j *bucketJournal) settle(ctx context.Context, c *Certificate) error {
	var st leaseState
	if raw := j.h.State(); len(raw) > 0 {
		_ = json.Unmarshal(raw, &st) // a record of another format settles nothing
	}
	if st.Settled == c.key() {
		j.settled = c.key()
		return nil
	}
	rel, ok := strings.CutPrefix(c.Prefix, j.root)
	if !ok {
		return newErr("state", c.Prefix, ErrState, fmt.Errorf("the log's head certifies run %s at %s, which is not below the log's %s", c.RunID, c.Prefix, j.root))
	}
	dst := j.s.Sub(rel)
	b, found, err := dataset.ReadSmall(ctx, dst, dataset.ManifestKey)
	switch {
	case err != nil:
		return newErr("state", c.Prefix+dataset.ManifestKey, ErrState, fmt.Errorf("checking the manifest of run %s, which the log certifies: %w", c.RunID, err))
	case found && hexSHA256(b) == c.ManifestSHA256:
		if err := ensureSuccess(ctx, dst, b); err != nil {
			return err
		}
		j.settled = c.key()
		return nil
	}
	if c.Repair != "" {
		// A repair stopped before its manifest was written: the run is what the entry
		// that certified the manifest still there says (validate checks that one), and its
		// cursor never moved. A head that certifies nothing is committed in its place.
		_, err = j.commit(ctx)
		return err
	}
	why := "its manifest was never written"
	if found {
		why = "the manifest there is not the one its certificate names"
	}
	if r := j.run(c.RunID); r != nil && r.Status == StatusSucceeded {
		r.Status = StatusFailed
		r.Error = fmt.Sprintf("stopped between journaling its success and writing its manifest at %s (%s): not certified; --resume finishes it", c.Prefix, why)
	}
	if j.st.Cursor != nil && j.st.Cursor.RunID == c.RunID {
		j.st.Cursor = c.Before
	}
	_, err = j.commit(ctx)
	return err
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ensureSuccess writes _SUCCESS for the manifest bytes b unless it is there already.
func ensureSuccess(ctx context.Context, s *store.Store, b []byte) error {
	want := dataset.SuccessBody(b)
	got, _, err := dataset.ReadSmall(ctx, s, dataset.SuccessKey)
	if err != nil {
		return newErr("state", dataset.SuccessKey, ErrState, err)
	}
	if bytes.Equal(got, want) {
		return nil
	}
	opts := &store.PutOptions{Size: int64(len(want)), ContentType: "text/plain"}
	if _, err := s.Put(ctx, dataset.SuccessKey, bytes.NewReader(want), opts); err != nil {
		return newErr("manifest", dataset.SuccessKey, ErrWrite, err)
	}
	return nil
}

// commit writes the journal to the log now.
func (j *bucketJournal) commit(ctx context.Context) (*lease.Entry, error) {
	e, err := j.h.Commit(ctx, LogKind, &j.st)
	if err != nil {
		return nil, err
	}
	j.st.Certifies = nil
	j.dirty, j.last = false, time.Now()
	return e, nil
}

// changed marks the journal changed and commits it when the last commit is older than
// checkpointEvery.
func (j *bucketJournal) changed(ctx context.Context) error {
	j.dirty = true
	if time.Since(j.last) < checkpointEvery {
		return nil
	}
	_, err := j.commit(ctx)
	return err
}

// Close commits what is left, releases the lease and closes the store.
func (j *bucketJournal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	if j.dirty && j.h.Err() == nil {
		_, err := j.commit(ctx)
		errs = append(errs, err)
	}
	j.stop()
	if j.h.Err() == nil {
		if j.settled != "" {
			errs = append(errs, j.h.ReleaseWith(ctx, leaseState{Settled: j.settled}))
		} else {
			errs = append(errs, j.h.Release(ctx))
		}
	}
	errs = append(errs, j.s.Close())
	return errors.Join(errs...)
}

// held returns nil while this run may write: it holds the lease (renewing it first when
// past its safe window); a lease taken over is lease.ErrFenced.
func (j *bucketJournal) held(ctx context.Context) error { return j.h.Check(ctx) }

// certify records the succeeded run r in the log before its manifest is written: m gets the
// LogRef of the entry that will record it, and that entry the sha256 of m's bytes. A holder
// fenced past fails lease.ErrFenced, and its manifest is never written.
func (j *bucketJournal) certify(ctx context.Context, r *RunRecord, m *Manifest) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.commitCertificate(ctx, m, func(sha string) *Certificate {
		before := j.st.Cursor
		j.finish(r)
		j.certified = r.RunID
		return &Certificate{RunID: r.RunID, Prefix: r.Prefix, ManifestSHA256: sha, Before: before}
	})
}

// commitCertificate gives m the LogRef of the log's next entry and commits that entry with the
// certificate cert makes of the sha256 of m's bytes (cert may change the journal it commits).
// The caller holds j.mu.
func (j *bucketJournal) commitCertificate(ctx context.Context, m *Manifest, cert func(sha string) *Certificate) error {
	seq, fence := j.h.Next()
	m.Log = &dataset.LogRef{Root: j.root, Name: j.h.Name(), Seq: seq, Fence: fence}
	b, err := m.Encode()
	if err != nil {
		return newErr("manifest", dataset.ManifestKey, ErrWrite, err)
	}
	j.st.Certifies = cert(hexSHA256(b))
	e, err := j.commit(ctx)
	if err != nil {
		return err
	}
	if e.Seq != seq {
		return newErr("state", j.root, ErrState, fmt.Errorf("the log advanced to seq %d while seq %d was expected", e.Seq, seq))
	}
	return nil
}

// finish records r's outcome in the state; a succeeded delta run advances the cursor.
func (j *bucketJournal) finish(r *RunRecord) {
	j.putRun(*r)
	if r.Status == StatusSucceeded && r.Window != nil && !r.Window.To.IsZero() {
		j.st.Cursor = &loggedCursor{Column: r.Window.Column, Value: r.Window.To, RunID: r.RunID}
	}
}

// putRun replaces the run of r's id, or appends it, keeping at most maxLoggedRuns.
func (j *bucketJournal) putRun(r RunRecord) {
	for i := range j.st.Runs {
		if j.st.Runs[i].RunID == r.RunID {
			j.st.Runs[i] = r
			return
		}
	}
	j.st.Runs = append(j.st.Runs, r)
	if n := len(j.st.Runs); n > maxLoggedRuns {
		j.st.Runs = j.st.Runs[n-maxLoggedRuns:]
	}
}

func (j *bucketJournal) run(runID string) *RunRecord {
	for i := range j.st.Runs {
		if j.st.Runs[i].RunID == runID {
			return &j.st.Runs[i]
		}
	}
	return nil
}

// stateConfig is sc for the state root: a directory is made at its first write (a log never
// written reads as empty).
func stateConfig(sc *store.Config) *store.Config {
	var c store.Config
	if sc != nil {
		c = *sc
	}
	c.CreateDir = true
	return &c
}

// LoggedRuns reads the runs of e from its commit log (state: bucket), newest first, without
// taking the lease: what `wharf runs` shows. A log never written has none.
func LoggedRuns(ctx context.Context, e *Export, sc *store.Config) ([]RunRecord, error) {
	root, err := StateRoot(e)
	if err != nil {
		return nil, err
	}
	s, err := store.Open(ctx, root, stateConfig(sc))
	if err != nil {
		return nil, err
	}
	defer s.Close()
	head, err := lease.OpenLog(s, e.Name).Head(ctx, LogKind)
	if err != nil || head == nil {
		return nil, err // no head: nothing written yet
	}
	var st bucketState
	if err := json.Unmarshal(head.Data, &st); err != nil {
		return nil, newErr("state", root+head.Key, ErrState, err)
	}
	out := make([]RunRecord, 0, len(st.Runs))
	for i := len(st.Runs) - 1; i >= 0; i-- {
		out = append(out, st.Runs[i])
	}
	return out, nil
}
