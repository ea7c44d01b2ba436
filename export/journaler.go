package export

import (
	"context"
	"slices"
)

// journal is where a run keeps its journal, chunk progress and delta cursor: the SQLite
// state file (*Journal, the default) or the export's commit log at its destination
// (*bucketJournal, with state: bucket).
type journal interface {
	LastRun(ctx context.Context, export string) (*RunRecord, error)
	// Runs returns the export's runs, newest first, at most limit (0: all it keeps).
	Runs(ctx context.Context, export string, limit int) ([]RunRecord, error)
	StartRun(ctx context.Context, r *RunRecord) error
	// AbandonRuns marks the export's runs still recorded as running, but keep, abandoned: a
	// later run started, so their process is gone.
	AbandonRuns(ctx context.Context, export, keep string) error
	// SetRunSchema records the columns a run writes its parts with; RunSchema returns them
	// (nil when none are recorded), so that a resume writes the same.
	SetRunSchema(ctx context.Context, runID string, cols []SchemaColumn) error
	RunSchema(ctx context.Context, runID string) ([]SchemaColumn, error)
	// SetRunDefinition records the definition a run starts with (a resume keeps the first);
	// RunDefinition returns it (nil when none is recorded), so that a resume continues only
	// the same export.
	SetRunDefinition(ctx context.Context, runID string, d Definition) error
	RunDefinition(ctx context.Context, runID string) (*Definition, error)
	FinishRun(ctx context.Context, r *RunRecord) error
	Cursor(ctx context.Context, export string) (Bound, error)
	BeginPlan(ctx context.Context, runID string) error
	AddChunk(ctx context.Context, runID string, idx int, r Range) error
	EndPlan(ctx context.Context, runID string) error
	PlanComplete(ctx context.Context, runID string) (bool, error)
	Chunks(ctx context.Context, runID string) ([]ChunkRecord, error)
	SetChunk(ctx context.Context, runID string, idx int, status string, p *Part) error
	updateWindow(ctx context.Context, runID string, w *CursorWindow) error
	// held returns nil while the run may write to its destination.
	held(ctx context.Context) error
	// certify records a succeeded run before its manifest is written (and may mark m).
	certify(ctx context.Context, r *RunRecord, m *Manifest) error
	Close() error
}

var (
	_ journal = (*Journal)(nil)
	_ journal = (*bucketJournal)(nil)
)

// openJournal opens the journal o names: the state file, or with StateBucket the export's
// commit log (taking its writer lease).
func openJournal(ctx context.Context, r *runner) (journal, error) {
	if r.o.StatePath == StateBucket {
		return openBucketJournal(ctx, r.e, r.o, r.storeConfig())
	}
	return OpenJournal(ctx, r.o.StatePath)
}

// A state file is local to one machine: nothing to hold, nothing to certify in it.
func (j *Journal) held(context.Context) error                           { return nil }
func (j *Journal) certify(context.Context, *RunRecord, *Manifest) error { return nil }

// The journal of a bucketJournal, in memory between commits.

func (j *bucketJournal) LastRun(_ context.Context, export string) (*RunRecord, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var last *RunRecord
	for i := range j.st.Runs {
		r := &j.st.Runs[i]
		if r.Export == export && (last == nil || !r.StartedAt.Before(last.StartedAt)) {
			last = r
		}
	}
	if last == nil {
		return nil, nil
	}
	c := *last
	return &c, nil
}

// Runs returns the export's runs in the log (the last maxLoggedRuns), newest first.
func (j *bucketJournal) Runs(_ context.Context, export string, limit int) ([]RunRecord, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []RunRecord
	for i := len(j.st.Runs) - 1; i >= 0 && (limit <= 0 || len(out) < limit); i-- {
		if r := j.st.Runs[i]; r.Export == export {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b RunRecord) int { return b.StartedAt.Compare(a.StartedAt) })
	return out, nil
}

// StartRun records r as running (again, for a resume, counting the attempt).
func (j *bucketJournal) StartRun(ctx context.Context, r *RunRecord) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.h.Check(ctx); err != nil {
		return err
	}
	if old := j.run(r.RunID); old != nil {
		old.Status, old.Error, old.FinishedAt = StatusRunning, "", r.FinishedAt
		old.Attempts++
	} else {
		c := *r
		c.Status, c.Attempts = StatusRunning, 1
		j.putRun(c)
		j.st.Chunks, j.st.PlanComplete = nil, false
	}
	return j.changed(ctx)
}

// FinishRun records r's outcome and commits it at once; a succeeded delta run advances the
// cursor in the same commit. The success certify committed needs nothing more.
func (j *bucketJournal) FinishRun(ctx context.Context, r *RunRecord) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.certified == r.RunID && r.Status == StatusSucceeded {
		j.settled = r.RunID // its manifest and _SUCCESS are written
		return nil
	}
	j.finish(r)
	_, err := j.commit(ctx)
	return err
}

func (j *bucketJournal) AbandonRuns(ctx context.Context, export, keep string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range j.st.Runs {
		r := &j.st.Runs[i]
		if r.Export == export && r.Status == StatusRunning && r.RunID != keep {
			r.Status, r.Error = StatusAbandoned, "never finished (its process was stopped) before a later run of the export started"
			j.dirty = true
		}
	}
	return nil
}

// SetRunSchema keeps the run's columns beside its chunks (the log holds the last run's).
func (j *bucketJournal) SetRunSchema(ctx context.Context, runID string, cols []SchemaColumn) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.st.SchemaRun, j.st.Schema = runID, slices.Clone(cols)
	j.dirty = true
	return nil
}

func (j *bucketJournal) RunSchema(_ context.Context, runID string) ([]SchemaColumn, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.st.SchemaRun != runID {
		return nil, nil
	}
	return slices.Clone(j.st.Schema), nil
}

// SetRunDefinition keeps the run's definition beside its chunks (the log holds the last
// run's).
func (j *bucketJournal) SetRunDefinition(_ context.Context, runID string, d Definition) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.st.DefinitionRun != runID {
		j.st.DefinitionRun, j.st.Definition = runID, &d
		j.dirty = true
	}
	return nil
}

func (j *bucketJournal) RunDefinition(_ context.Context, runID string) (*Definition, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.st.DefinitionRun != runID || j.st.Definition == nil {
		return nil, nil
	}
	d := *j.st.Definition
	return &d, nil
}

func (j *bucketJournal) Cursor(_ context.Context, export string) (Bound, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.st.Cursor == nil {
		return Bound{}, nil
	}
	return j.st.Cursor.Value, nil
}

func (j *bucketJournal) BeginPlan(context.Context, string) error { return nil }

func (j *bucketJournal) AddChunk(ctx context.Context, _ string, idx int, r Range) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.st.Chunks = append(j.st.Chunks, ChunkRecord{Index: idx, Range: r, Status: "pending"})
	j.dirty = true
	return nil
}

func (j *bucketJournal) EndPlan(ctx context.Context, _ string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.st.PlanComplete = true
	j.dirty = true
	return nil
}

func (j *bucketJournal) PlanComplete(context.Context, string) (bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.st.PlanComplete, nil
}

func (j *bucketJournal) Chunks(_ context.Context, runID string) ([]ChunkRecord, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if n := len(j.st.Runs); n == 0 || j.st.Runs[n-1].RunID != runID {
		return nil, nil
	}
	return slices.Clone(j.st.Chunks), nil
}

// SetChunk records a chunk's status. Before a chunk is written ("running") it checks that
// this run still holds the lease; a committed chunk is committed to the log when the last
// commit is older than checkpointEvery.
func (j *bucketJournal) SetChunk(ctx context.Context, _ string, idx int, status string, p *Part) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if status == "running" {
		if err := j.h.Check(ctx); err != nil {
			return err
		}
	}
	for i := range j.st.Chunks {
		if j.st.Chunks[i].Index == idx {
			j.st.Chunks[i].Status, j.st.Chunks[i].Part = status, Part{}
			if p != nil {
				j.st.Chunks[i].Part = *p
			}
		}
	}
	if status != "committed" {
		j.dirty = true
		return nil
	}
	return j.changed(ctx)
}

func (j *bucketJournal) updateWindow(_ context.Context, runID string, w *CursorWindow) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if r := j.run(runID); r != nil {
		r.Window = w
	}
	j.dirty = true
	return nil
}
