package export

import (
	"context"
	"errors"
	"strings"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// manifest builds the run's manifest from its committed chunks, in chunk order.
func (r *runner) manifest(chunks []ChunkRecord, status string, cause error) *Manifest {
	now := r.o.now()
	m := &Manifest{
		ManifestVersion: dataset.ManifestVersion, WharfVersion: r.version(), Export: r.e.Name, RunID: r.rec.RunID,
		Status: status, Source: r.sourceDesc(), Relation: r.e.Table, Mode: r.e.Mode, Format: r.e.Format,
		ChunkKey: r.e.ChunkKey, Cursor: r.rec.Window, StartedAt: r.res.StartedAt, FinishedAt: now,
		DurationMS: now.Sub(r.res.StartedAt).Milliseconds(), Schema: schemaColumns(r.cols), Parts: []Part{},
	}
	if m.Relation == "" {
		m.Relation = "query"
	}
	if r.src != nil && r.src.pg != nil {
		m.Session = r.src.pg.settings
	}
	m.Consistency, m.Definition = r.consistency(), r.def.Fingerprint
	if cause != nil {
		m.Error = cause.Error()
	}
	m.SchemaFingerprint = dataset.SchemaFingerprint(m.Schema)
	for _, c := range chunks {
		if c.Status == "committed" {
			m.Parts = append(m.Parts, c.Part)
			m.Rows += c.Part.Rows
			m.Bytes += c.Part.Size
		}
	}
	return m
}

func (r *runner) version() string {
	if r.o.Version == "" {
		return "dev"
	}
	return r.o.Version
}

// sourceDesc names the source without a credential.
func (r *runner) sourceDesc() string {
	if r.src != nil {
		return r.src.desc
	}
	scheme, _, _ := strings.Cut(r.e.Source, "://")
	return scheme
}

// succeed writes the manifest, then _SUCCESS, and journals the success (advancing a delta
// cursor).
func (r *runner) succeed(ctx context.Context, chunks []ChunkRecord) error {
	if err := r.beforeWrite(ctx); err != nil {
		return err
	}
	m := r.manifest(chunks, StatusSucceeded, nil)
	r.finishRecord(m)
	if err := r.j.certify(ctx, &r.rec, m); err != nil {
		return err
	}
	if err := putManifest(ctx, r.dst, m); err != nil {
		return err
	}
	return r.j.FinishRun(ctx, &r.rec)
}

func (r *runner) finishRecord(m *Manifest) {
	r.rec.Status, r.rec.Error, r.rec.FinishedAt = m.Status, m.Error, m.FinishedAt
	r.rec.Rows, r.rec.Parts, r.rec.Bytes = m.Rows, len(m.Parts), m.Bytes
	r.res.Status, r.res.FinishedAt, r.res.Parts, r.res.Consistency = m.Status, m.FinishedAt, m.Parts, m.Consistency
	r.res.Rows, r.res.Bytes = m.Rows, m.Bytes
}

// fail applies M4 and journals the failure. A run that wrote anything removes _SUCCESS and
// writes a failed manifest naming its parts; one that wrote nothing leaves the prefix as it
// was, except that a prefix with no manifest yet gets a failed manifest with no parts.
func (r *runner) fail(ctx context.Context, cause error) (*Result, error) {
	wctx := context.WithoutCancel(ctx) // record the failure even when the run was cancelled
	var chunks []ChunkRecord
	if cs, err := r.j.Chunks(wctx, r.rec.RunID); err == nil {
		chunks = cs
	}
	m := r.manifest(chunks, StatusFailed, cause)
	if err := r.j.held(wctx); err != nil {
		// Another node holds the export now (state: bucket): this run writes nothing more,
		// neither at the prefix nor in the log.
		r.finishRecord(m)
		if errors.Is(cause, err) || errcode.Of(cause) == errcode.Of(err) {
			return &r.res, cause
		}
		return &r.res, errors.Join(cause, err)
	}
	errs := []error{cause}
	r.wroteMu.Lock()
	wrote := r.wrote
	r.wroteMu.Unlock()
	switch {
	case wrote:
		// The cause is often this very delete failing (the first write of a run): say it once.
		if err := r.dst.Delete(wctx, dataset.SuccessKey, nil); err != nil && !strings.Contains(cause.Error(), err.Error()) {
			errs = append(errs, err)
		}
		errs = append(errs, putManifest(wctx, r.dst, m))
	case r.noManifest(wctx):
		m.Parts, m.Rows, m.Bytes = []Part{}, 0, 0
		errs = append(errs, putManifest(wctx, r.dst, m))
	}
	r.finishRecord(m)
	errs = append(errs, r.j.FinishRun(wctx, &r.rec))
	return &r.res, errors.Join(errs...)
}

// noManifest reports whether the prefix has no manifest and can be written (a missing bucket
// has none, but nothing is written there; a directory not made yet is made by the put).
func (r *runner) noManifest(ctx context.Context) bool {
	_, err := r.dst.Head(ctx, dataset.ManifestKey)
	return errors.Is(err, store.ErrNotExist)
}
