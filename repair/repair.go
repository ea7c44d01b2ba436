package repair

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/reconcile"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// Options say what to repair.
type Options struct {
	Export *export.Export // the export, as its config section prepared it
	Prefix string         // the URL of the run's prefix
	Store  *store.Config  // the prefix's store options
	Getenv func(string) string
	// Report is the reconcile report to repair from; nil reconciles the prefix afresh.
	Report *reconcile.Report
	// Execute writes the repair; false only plans it.
	Execute bool
	Now     func() time.Time // nil is time.Now
	// Lease, Verdicts and Logger are those of the export's writer lease, for a run journaled
	// in its commit log (state: bucket), as export.Options has them.
	Lease    *lease.Config
	Verdicts *probe.Verdicts
	Logger   *slog.Logger
}

// Plan is what Run planned and, executed, did. Its JSON is the stable schema of `wharf repair
// --format json` (fields are only ever added).
type Plan struct {
	Prefix   string `json:"prefix"`
	Export   string `json:"export"`
	RunID    string `json:"run_id"`
	Executed bool   `json:"executed"`
	RepairID string `json:"repair_id,omitempty"` // the new parts are named for it
	Note     string `json:"note,omitempty"`
	// Table is the repair's commit to the export's Iceberg table (its iceberg: section):
	// the new parts in place of those they replace.
	Table  *export.TableCommit `json:"table,omitempty"`
	Chunks []Action            `json:"chunks"` // the chunks to repair (none: nothing to do)
}

// Action is one chunk to repair.
type Action struct {
	Chunk   int    `json:"chunk"`
	Part    string `json:"part"`
	Status  string `json:"status"` // the report's: mismatch or unknown
	Reason  string `json:"reason"`
	NewPart string `json:"new_part,omitempty"` // executed: the part that replaced it
	Rows    *int64 `json:"rows,omitempty"`     // executed: the new part's rows
}

// Run plans and, with o.Execute, executes the repair of the run at o.Prefix (see the package
// documentation).
func Run(ctx context.Context, o Options) (_ *Plan, err error) {
	s, err := store.Open(ctx, o.Prefix, o.Store)
	if err != nil {
		return nil, errcode.E("repair", o.Prefix, dataset.ErrVerifyManifestRead, err)
	}
	defer s.Close()
	// A run journaled in a commit log is repaired under its writer lease, held from here to
	// the end, so nothing else of the export writes meanwhile; taking it settles a run or a
	// repair stopped between its certificate and its manifest. A plan takes no lease.
	hold, err := holdLog(ctx, s, o)
	if err != nil {
		return nil, err
	}
	if hold != nil {
		defer func() { err = errors.Join(err, hold.Close()) }()
	}
	if p, done, err := finishInterrupted(ctx, s, o); done || err != nil {
		if err == nil && p.Executed {
			err = commitTable(ctx, o, p)
		}
		return p, err
	}
	// The manifest's version before anything is read: the new manifest replaces only this one
	// (If-Match), so an export or another repair that wrote one meanwhile is never written over.
	head, err := s.Head(ctx, dataset.ManifestKey)
	if err != nil {
		return nil, errcode.E("repair", o.Prefix, dataset.ErrVerifyManifestRead, err)
	}
	rep := o.Report
	if rep == nil {
		if rep, err = reconcile.Run(ctx, reconcile.Options{Export: o.Export, Prefix: o.Prefix, Store: o.Store, Getenv: o.Getenv, Parallel: 2}); err != nil {
			return nil, err
		}
	}
	v, err := dataset.Validate(ctx, s, o.Prefix, false, dataset.StoreOpener(o.Store))
	if err != nil {
		return nil, err
	}
	m := v.Manifest
	switch {
	case m == nil || m.Status != dataset.StatusSucceeded:
		return nil, errcode.E("repair", o.Prefix, ErrRefused, errors.New("the prefix holds no manifest of a succeeded run"))
	case m.Export != o.Export.Name:
		return nil, errcode.E("repair", o.Prefix, ErrRefused, fmt.Errorf("the run there is of export %q, not %q", m.Export, o.Export.Name))
	case rep.RunID != m.RunID:
		return nil, errcode.E("repair", o.Prefix, ErrRefused, fmt.Errorf("the report is of run %s, the prefix holds run %s: reconcile it again", rep.RunID, m.RunID))
	case o.Execute && m.Log != nil && hold == nil:
		return nil, errcode.E("repair", o.Prefix, ErrRefused, errors.New("the run is journaled in a commit log (state: bucket), and the export's writer lease was not taken: its manifest changed while the repair started; run it again"))
	case m.Definition != "" && m.Definition != o.Export.Fingerprint():
		return nil, errcode.E("repair", o.Prefix, reconcile.ErrRefused, errors.New("the export's definition is not the one the run was made to: its chunks' SQL is not known; export a new run"))
	}
	for _, pr := range v.Problems {
		if !slices.Contains([]string{dataset.ProblemPartMissing, dataset.ProblemPartSize, dataset.ProblemPartETag,
			dataset.ProblemPartHash, dataset.ProblemPartUnreadable}, pr.Code) {
			return nil, errcode.E("repair", o.Prefix, ErrRefused, fmt.Errorf("not a certified run: %w", v.NotCertified()))
		}
	}
	p := &Plan{Prefix: o.Prefix, Export: m.Export, RunID: m.RunID, Chunks: []Action{}}
	var idx []int
	for _, c := range rep.Chunks {
		if c.Status == reconcile.Match {
			continue
		}
		i := slices.IndexFunc(m.Parts, func(part dataset.Part) bool { return part.Key == c.Part })
		if i < 0 {
			return nil, errcode.E("repair", o.Prefix, ErrRefused, fmt.Errorf("the report's chunk %d names part %s, which the run's manifest does not list: reconcile it again", c.Chunk, c.Part))
		}
		idx = append(idx, i)
		p.Chunks = append(p.Chunks, Action{Chunk: c.Chunk, Part: c.Part, Status: c.Status, Reason: reasonOf(c)})
	}
	if !o.Execute || len(idx) == 0 {
		if o.Execute { // a repair certified earlier whose table commit was cut short
			if p.Table, err = export.CommitRepair(ctx, o.Export, o.Prefix, m, o.Getenv, o.Verdicts); err != nil {
				return p, tableErr(p, err)
			}
		}
		return p, nil
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	at := now().UTC()
	p.RepairID = export.NewRunID(at)
	parts, err := export.RereadParts(ctx, o.Export, m, idx, s, p.RepairID, o.Getenv)
	if err != nil {
		return nil, err
	}
	next := *m
	next.Parts = slices.Clone(m.Parts)
	rep2 := dataset.Repair{ID: p.RepairID, At: at}
	for k, i := range idx {
		next.Superseded = append(next.Superseded, dataset.SupersededPart{Part: m.Parts[i], By: parts[k].Key, RepairID: p.RepairID})
		next.Parts[i] = parts[k]
		rep2.Chunks = append(rep2.Chunks, parts[k].Chunk)
		p.Chunks[k].NewPart, p.Chunks[k].Rows = parts[k].Key, &parts[k].Rows
	}
	next.Repairs = append(slices.Clone(m.Repairs), rep2)
	next.Rows, next.Bytes = 0, 0
	for _, part := range next.Parts {
		next.Rows += part.Rows
		next.Bytes += part.Size
	}
	if c := m.Consistency; c != nil && c.Mode == dataset.ConsistencySnapshot {
		// The new parts are the source as it is now, not as the snapshot saw it: the dataset
		// is no longer the table at one instant, and the manifest must not say it is.
		next.Consistency = &dataset.Consistency{Mode: dataset.ConsistencyChunk, Requested: dataset.ConsistencySnapshot}
	}
	if hold != nil {
		old, ok, err := dataset.ReadSmall(ctx, s, dataset.ManifestKey)
		if err != nil || !ok {
			return nil, errcode.E("repair", o.Prefix, dataset.ErrVerifyManifestRead, errors.Join(err, store.ErrNotExist))
		}
		if err := hold.Recertify(ctx, &next, old, p.RepairID); err != nil {
			return nil, err
		}
	}
	if err := certify(ctx, s, &next, head.ETag); err != nil {
		if errors.Is(err, store.ErrPreconditionFailed) {
			return nil, errcode.E("repair", o.Prefix, ErrRefused, fmt.Errorf("manifest.json changed while the repair ran (an export or another repair wrote it): it is not written over; its new parts %s are left unlisted, reconcile again", p.RepairID))
		}
		return nil, err
	}
	if hold != nil {
		hold.Written(m.RunID, p.RepairID)
	}
	p.Executed = true
	if p.Table, err = export.CommitRepair(ctx, o.Export, o.Prefix, &next, o.Getenv, o.Verdicts); err != nil {
		return p, tableErr(p, err)
	}
	return p, nil
}

// commitTable commits the repair the prefix's manifest records to the export's table.
func commitTable(ctx context.Context, o Options, p *Plan) error {
	s, err := store.Open(ctx, o.Prefix, o.Store)
	if err != nil {
		return err
	}
	defer s.Close()
	v, err := dataset.Validate(ctx, s, o.Prefix, false, dataset.StoreOpener(o.Store))
	if err != nil || v.Manifest == nil {
		return err
	}
	if p.Table, err = export.CommitRepair(ctx, o.Export, o.Prefix, v.Manifest, o.Getenv, o.Verdicts); err != nil {
		return tableErr(p, err)
	}
	return nil
}

func tableErr(p *Plan, err error) error {
	return fmt.Errorf("repair %s of run %s is certified at its prefix but not in the export's iceberg table (run the repair again to commit it): %w", p.RepairID, p.RunID, err)
}

// holdLog takes, for a repair to execute, the writer lease of the export whose logged run the
// prefix holds (nil when the manifest there is not logged, or cannot be read: Validate says
// why later).
func holdLog(ctx context.Context, s *store.Store, o Options) (*export.LogHold, error) {
	if !o.Execute {
		return nil, nil
	}
	b, ok, err := dataset.ReadSmall(ctx, s, dataset.ManifestKey)
	if err != nil || !ok {
		return nil, nil
	}
	m, err := dataset.DecodeManifest(b)
	if err != nil || m.Log == nil || m.Export != o.Export.Name {
		return nil, nil
	}
	h, err := export.HoldLog(ctx, o.Export, export.Options{Getenv: o.Getenv, Lease: o.Lease, Verdicts: o.Verdicts, Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("repair %s: the run is journaled in the export's commit log, whose writer lease it takes: %w", o.Prefix, err)
	}
	return h, nil
}

// certify writes m as manifest.json in place of the version etag, then its _SUCCESS.
func certify(ctx context.Context, s *store.Store, m *dataset.Manifest, etag string) error {
	b, err := m.Encode()
	if err != nil {
		return err
	}
	if _, err := s.Put(ctx, dataset.ManifestKey, bytes.NewReader(b), &store.PutOptions{Size: int64(len(b)), ContentType: "application/json", IfMatch: etag}); err != nil {
		return err
	}
	return mark(ctx, s, b)
}

func mark(ctx context.Context, s *store.Store, manifest []byte) error {
	body := dataset.SuccessBody(manifest)
	_, err := s.Put(ctx, dataset.SuccessKey, bytes.NewReader(body), &store.PutOptions{Size: int64(len(body)), ContentType: "text/plain"})
	return err
}

// finishInterrupted finishes a repair killed between its manifest and _SUCCESS: the prefix's
// manifest records a repair, and its only problem is the marker. done reports that it did
// (or, without Execute, that the plan is to).
func finishInterrupted(ctx context.Context, s *store.Store, o Options) (*Plan, bool, error) {
	v, err := dataset.Validate(ctx, s, o.Prefix, false, dataset.StoreOpener(o.Store))
	if err != nil || v.Certified || v.Manifest == nil || len(v.Manifest.Repairs) == 0 || v.Manifest.Export != o.Export.Name {
		return nil, false, nil
	}
	for _, pr := range v.Problems {
		if pr.Code != dataset.ProblemSuccessMismatch && pr.Code != dataset.ProblemSuccessMissing {
			return nil, false, nil
		}
	}
	m := v.Manifest
	last := m.Repairs[len(m.Repairs)-1]
	p := &Plan{Prefix: o.Prefix, Export: m.Export, RunID: m.RunID, RepairID: last.ID, Chunks: []Action{},
		Note: fmt.Sprintf("repair %s was interrupted after its manifest, before its _SUCCESS", last.ID)}
	if !o.Execute {
		p.Note += ": --execute writes the _SUCCESS"
		return p, true, nil
	}
	b, ok, err := dataset.ReadSmall(ctx, s, dataset.ManifestKey)
	if err != nil || !ok {
		return nil, true, errcode.E("repair", o.Prefix, dataset.ErrVerifyManifestRead, errors.Join(err, store.ErrNotExist))
	}
	if err := mark(ctx, s, b); err != nil {
		return nil, true, err
	}
	p.Executed, p.Note = true, p.Note+": its _SUCCESS is written now"
	return p, true, nil
}

func reasonOf(c reconcile.Chunk) string {
	if c.Reason != "" {
		return c.Reason
	}
	var figs []string
	for _, d := range c.Differences {
		figs = append(figs, d.Figure)
	}
	if len(figs) > 3 {
		figs = append(figs[:3], fmt.Sprintf("%d more", len(figs)-3))
	}
	return "differs: " + strings.Join(figs, ", ")
}
