package export

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/store"
)

// Result is what a run did.
type Result struct {
	RunID       string    `json:"run_id"`
	Export      string    `json:"export"`
	Prefix      string    `json:"resolved_prefix"`
	Status      string    `json:"status"`
	Resumed     bool      `json:"resumed"`
	Rows        int64     `json:"rows"`
	Bytes       int64     `json:"bytes"`
	Parts       []Part    `json:"parts"`
	Skipped     []string  `json:"skipped,omitempty"`     // parts kept from an earlier attempt
	Quarantined []string  `json:"quarantined,omitempty"` // where untracked or corrupt objects went
	Aborted     []string  `json:"aborted,omitempty"`     // keys where a resume aborted an incomplete upload
	Superseded  []string  `json:"superseded,omitempty"`  // where earlier runs' parts went (superseded: move)
	StartedAt   time.Time `json:"started_at"`
	FinishedAt  time.Time `json:"finished_at"`

	// Consistency is what state of the source the parts were read from (as the manifest says).
	Consistency *Consistency `json:"consistency,omitempty"`

	// Table is the run's commit to the export's Iceberg table (Export.Iceberg).
	Table *TableCommit `json:"table,omitempty"`
}

// Run exports e once: parts, then manifest.json, then _SUCCESS (M1–M3). A failure follows M4;
// Resume follows M8 and M9. The returned error has an export or store kind; the Result, when
// not nil, says what was written even on failure.
func Run(ctx context.Context, e Export, o Options) (*Result, error) {
	if err := e.Check(); err != nil {
		return nil, err
	}
	if err := e.checkKept(&e.Store); err != nil {
		return nil, err
	}
	if o.StatePath == "" {
		return nil, newErr("config", "state", ErrConfig, errors.New("no state file path"))
	}
	r := &runner{e: &e, o: &o, def: definitionOf(&e)}
	j, err := openJournal(ctx, r)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	r.j = j
	return r.run(ctx)
}

// NewRunID returns a run id for a run started at t: sortable by time, unique by 3 random bytes.
func NewRunID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

type runner struct {
	e   *Export
	o   *Options
	j   journal
	dst *store.Store
	src *source
	rec RunRecord
	res Result
	def Definition // what decides the rows: journaled with a new run, compared by a resume

	cols   []Column
	window window
	// planInherited: a resume kept chunks planned (and perhaps read) by an earlier attempt,
	// from another snapshot than its own.
	planInherited bool

	writeOnce sync.Once
	wroteMu   sync.Mutex
	wrote     bool // a part (or a quarantine move) reached the prefix
	wroteErr  error
	prog      Progress

	table *tableRun // the export's Iceberg table, when it has one
}

func (r *runner) run(ctx context.Context) (*Result, error) {
	prev, err := r.j.LastRun(ctx, r.e.Name)
	if err == nil {
		prev, err = r.settleUnfinished(ctx, prev)
	}
	if err != nil {
		return nil, err
	}
	start := r.o.now()
	r.rec = RunRecord{Export: r.e.Name, StartedAt: start}
	if r.o.Resume && prev != nil && prev.Status != StatusSucceeded {
		if err := r.sameDefinition(ctx, prev); err != nil {
			return nil, err
		}
		r.rec.RunID, r.rec.Prefix, r.rec.Window, r.res.Resumed = prev.RunID, prev.Prefix, prev.Window, true
	} else {
		r.rec.RunID = NewRunID(start)
		if r.rec.Prefix, err = Expand(r.e.Destination, r.e.VarsFor(start, r.rec.RunID)); err != nil {
			return nil, err
		}
	}
	r.res = Result{RunID: r.rec.RunID, Export: r.e.Name, Prefix: r.rec.Prefix, Resumed: r.res.Resumed, StartedAt: start}
	if r.dst, err = store.Open(ctx, r.rec.Prefix, r.storeConfig()); err != nil {
		if ConfigError(err) {
			return nil, err // nothing was attempted: no run to journal
		}
		return r.failEarly(ctx, err)
	}
	defer r.dst.Close()
	if err := r.checkComplete(ctx, prev); err != nil {
		return nil, err
	}
	err = r.prepare(ctx)
	defer func() {
		if r.src != nil {
			r.src.Close()
		}
		if r.table != nil {
			r.table.close()
		}
	}()
	if ConfigError(err) {
		return nil, err // a chunk key that cannot chunk, a time unit for no such column…
	}
	if !r.res.Resumed {
		if err := r.j.AbandonRuns(ctx, r.e.Name, r.rec.RunID); err != nil {
			return nil, err
		}
	}
	if err := r.startRun(ctx); err != nil {
		return nil, err
	}
	if err == nil {
		err = r.export(ctx)
	}
	if err != nil {
		return r.fail(ctx, err)
	}
	if err := r.retire(ctx); err != nil {
		return &r.res, err
	}
	return &r.res, r.commitTable(ctx)
}

// checkComplete refuses a resume over a prefix holding _SUCCESS (M8), unless the journal's
// last run of the export did not succeed, or Force.
func (r *runner) checkComplete(ctx context.Context, prev *RunRecord) error {
	if !r.o.Resume || r.o.Force || r.res.Resumed {
		return nil
	}
	_, err := r.dst.Head(ctx, dataset.SuccessKey)
	switch {
	case errors.Is(err, store.ErrNotExist):
		return nil // nothing there to complete (or a directory not made yet)
	case err != nil:
		return err
	}
	last := "no journaled run"
	if prev != nil {
		last = "its last run " + prev.RunID + " " + prev.Status
	}
	return newErr("resume", r.rec.Prefix, ErrDestAlreadyComplete,
		fmt.Errorf("_SUCCESS is present and %s: nothing to resume (give --force to run again)", last))
}

// failEarly journals a run that could not even open its destination.
func (r *runner) failEarly(ctx context.Context, cause error) (*Result, error) {
	if err := r.startRun(ctx); err != nil {
		return nil, errors.Join(cause, err)
	}
	r.rec.Status, r.rec.Error, r.rec.FinishedAt = StatusFailed, cause.Error(), r.o.now()
	_ = r.j.FinishRun(context.WithoutCancel(ctx), &r.rec)
	r.res.Status, r.res.FinishedAt = StatusFailed, r.rec.FinishedAt
	return &r.res, cause
}

// startRun journals the run as running, and a new run's definition with it (a resumed run
// keeps the one it started with).
func (r *runner) startRun(ctx context.Context) error {
	if !r.res.Resumed {
		if err := r.j.SetRunDefinition(ctx, r.rec.RunID, r.def); err != nil {
			return err
		}
	}
	return r.j.StartRun(ctx, &r.rec)
}

// prepare opens the source and fixes what the run reads, before the run is journaled: its
// columns, delta window and schema. A configuration error found here (ConfigError) ends the
// run unjournaled, with nothing written.
func (r *runner) prepare(ctx context.Context) error {
	var err error
	if r.src, err = openSource(ctx, r.e, r.parallel(), r.o.Getenv); err != nil {
		return err
	}
	if r.cols, err = r.src.columns(ctx, r.e); err != nil {
		return err
	}
	if err := r.setWindow(ctx); err != nil {
		return err
	}
	if err := r.openSnapshot(ctx); err != nil {
		return err
	}
	if err := r.settleSchema(ctx); err != nil {
		return err
	}
	return r.openTable(ctx)
}

// export does the work of a run between StartRun and FinishRun.
func (r *runner) export(ctx context.Context) error {
	p, err := r.plan(ctx)
	if err != nil {
		return err
	}
	todo, err := r.reconcile(ctx, p.chunks)
	if err != nil {
		return err
	}
	if err := r.writeChunks(ctx, p, todo); err != nil {
		return err
	}
	chunks := make([]ChunkRecord, len(p.chunks))
	for i, c := range p.chunks {
		chunks[i] = *c
	}
	return r.succeed(ctx, chunks)
}

func (r *runner) parallel() int { return max(1, r.o.Parallel) }

// setWindow fixes the delta window: past the cursor of the last successful run, up to the
// largest cursor value now, held back below what a transaction open now may still commit
// (settleDelta) and below a value a transaction not yet begun may still write
// (settleRepeats). A resumed run keeps the window it started with.
func (r *runner) setWindow(ctx context.Context) error {
	if r.e.Mode != ModeDelta {
		return nil
	}
	if r.rec.Window == nil {
		after, err := r.j.Cursor(ctx, r.e.Name)
		if err != nil {
			return err
		}
		w := window{Column: r.e.CursorColumn, After: after}
		upTo, err := r.src.max(ctx, r.e, r.e.CursorColumn, w)
		if err != nil {
			return err
		}
		upTo, held, err := r.settleDelta(ctx, w, upTo)
		if err != nil {
			return err
		}
		if upTo, held, err = r.settleRepeats(ctx, w, upTo, held); err != nil {
			return err
		}
		r.rec.Window = &CursorWindow{Column: r.e.CursorColumn, From: after, To: upTo, Held: held}
	}
	r.window = window{Column: r.rec.Window.Column, After: r.rec.Window.From, UpTo: r.rec.Window.To}
	r.window.Empty = r.window.UpTo.IsZero() // no cursor values at all: no rows
	return r.j.updateWindow(ctx, r.rec.RunID, r.rec.Window)
}

// runPlan is a run's plan as far as it is made: the chunks journaled so far, and the ranges
// still to come (nil once the plan is whole).
type runPlan struct {
	chunks []*ChunkRecord
	rest   *ranges
}

// plan returns the run's plan: the one journaled by the interrupted run being resumed, or a
// new one. A plan is made while chunks are written (each range costs the source an index
// scan); whatever part of it an interrupted run journaled, a resume keeps and continues.
func (r *runner) plan(ctx context.Context) (*runPlan, error) {
	p := &runPlan{}
	if r.res.Resumed {
		cs, err := r.j.Chunks(ctx, r.rec.RunID)
		if err != nil {
			return nil, err
		}
		for i := range cs {
			p.chunks = append(p.chunks, &cs[i])
		}
		r.planInherited = len(cs) > 0
		if r.planInherited && r.e.Consistency == ConsistencySnapshot {
			r.o.log().Warn("export: a resumed run is not one snapshot: the interrupted attempt's snapshot ended with it, "+
				"and its manifest says consistency chunk (run without --resume for one snapshot)",
				"export", r.e.Name, "run_id", r.rec.RunID)
		}
		complete, err := r.j.PlanComplete(ctx, r.rec.RunID)
		if err != nil || complete {
			return p, err
		}
	}
	if err := r.j.BeginPlan(ctx, r.rec.RunID); err != nil {
		return nil, err
	}
	var after *Range
	if n := len(p.chunks); n > 0 {
		after = &p.chunks[n-1].Range
	}
	p.rest = r.src.planRanges(r.e, r.window, after)
	return p, nil
}

// more plans and journals the next chunk of p, returning its index; ok is false once the
// plan is whole (and journaled so).
func (r *runner) more(ctx context.Context, p *runPlan) (idx int, ok bool, err error) {
	if p.rest == nil {
		return 0, false, nil
	}
	rg, ok, err := p.rest.next(ctx)
	if err != nil {
		return 0, false, err
	}
	if !ok {
		p.rest = nil
		return 0, false, r.j.EndPlan(ctx, r.rec.RunID)
	}
	idx = len(p.chunks)
	if err := r.j.AddChunk(ctx, r.rec.RunID, idx, rg); err != nil {
		return 0, false, err
	}
	r.wroteMu.Lock()
	p.chunks = append(p.chunks, &ChunkRecord{Index: idx, Range: rg, Status: "pending"})
	r.prog.Chunks = len(p.chunks)
	r.wroteMu.Unlock()
	return idx, true, nil
}

// storeConfig is how the destination opens: the export's store options, reading the run's
// environment unless they name their own, and checked as an export destination (a custom
// endpoint outside this machine needs an allow).
func (r *runner) storeConfig() *store.Config {
	c := r.e.Store
	if c.Getenv == nil {
		c.Getenv = r.o.Getenv
	}
	c.RequireAllow = true
	c.CreateDir = true // a directory destination is made at the run's first write
	return &c
}
