package export

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/store"
)

// RereadParts reads again, from e's source as it is now, the rows of the parts of run m at
// the indexes idx (into m.Parts), each with the SQL that read it (its chunk's range of the
// chunking key, within the run's cursor window for a delta run), and writes each as a new
// part at dst, beside the old: named for repairID (a run id of its own, NewRunID), so no part
// is ever written over. The source's columns must be the run's (ErrSchemaChanged otherwise);
// the caller has checked that e's definition is the run's. It returns the new parts, in the
// order of idx.
func RereadParts(ctx context.Context, e *Export, m *dataset.Manifest, idx []int, dst *store.Store, repairID string, getenv func(string) string) ([]dataset.Part, error) {
	if m.Mode == dataset.ModeDelta && m.Cursor == nil {
		return nil, newErr("repair", m.RunID, ErrConfig, fmt.Errorf("the manifest of delta run %s records no cursor window: its chunks' rows cannot be selected again", m.RunID))
	}
	s, err := openSource(ctx, e, 1, getenv)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	cols, err := s.columns(ctx, e)
	if err != nil {
		return nil, err
	}
	if err := adoptSchema(cols, m.Schema, s.what(e), s.pg != nil, "the run's parts have another schema, so they cannot be replaced; export a new run instead"); err != nil {
		return nil, err
	}
	var w window
	if m.Cursor != nil {
		w = window{Column: m.Cursor.Column, After: m.Cursor.From, UpTo: m.Cursor.To, Empty: m.Cursor.To.IsZero()}
	}
	out := make([]dataset.Part, 0, len(idx))
	for _, i := range idx {
		old := m.Parts[i]
		key := partKey(repairID, old.Chunk, e.Format)
		part, _, err := writePart(ctx, dst, key, e.Format, schemaOf(cols),
			func(emit func(arrow.RecordBatch) error) (int64, error) {
				return s.readRange(ctx, e, cols, old.Range, w, 16*1024, emit)
			})
		if err != nil {
			return nil, err
		}
		part.Chunk, part.Range = old.Chunk, old.Range
		out = append(out, part)
	}
	return out, nil
}

// LogHold is an export's writer lease and commit log (state: bucket), held by a repair of
// one of its runs from HoldLog to Close: no run of the export, and no other repair, writes
// meanwhile, and the repair's new manifest is certified by an entry of the log, as a run's is.
type LogHold struct{ j *bucketJournal }

// HoldLog takes e's writer lease (o.Lease, o.Getenv, o.Verdicts and o.Logger as a run would)
// and reads its log, settling an entry left uncertain by a run or a repair stopped between
// its certificate and its manifest. Another node's lease fails *lease.HeldError.
func HoldLog(ctx context.Context, e *Export, o Options) (*LogHold, error) {
	c := e.Store
	if c.Getenv == nil {
		c.Getenv = o.Getenv
	}
	c.RequireAllow = true
	j, err := openBucketJournal(ctx, e, &o, &c)
	if err != nil {
		return nil, err
	}
	return &LogHold{j: j}, nil
}

// Recertify commits the log entry that certifies m, the manifest of run m.RunID after repair
// repairID, in place of the manifest whose bytes are old; m gets the LogRef of that entry. It
// is called after the repair's parts are written and before m is: a holder fenced past fails
// lease.ErrFenced and m is never written. Should m then not be written, the next holder finds
// old at the prefix and leaves the run as its earlier entry certified it (settle).
func (h *LogHold) Recertify(ctx context.Context, m *Manifest, old []byte, repairID string) error {
	j := h.j
	j.mu.Lock()
	defer j.mu.Unlock()
	r := j.run(m.RunID)
	if r == nil || r.Status != StatusSucceeded {
		return newErr("state", j.root, ErrState, fmt.Errorf("the log %s does not journal run %s as succeeded: its manifest is not certified there", j.h.Name(), m.RunID))
	}
	was := *r
	err := j.commitCertificate(ctx, m, func(sha string) *Certificate {
		r.Rows, r.Parts, r.Bytes = m.Rows, len(m.Parts), m.Bytes
		r.Verification = nil // what was verified is not this manifest
		return &Certificate{RunID: m.RunID, Prefix: r.Prefix, ManifestSHA256: sha, Before: j.st.Cursor,
			Repair: repairID, Replaces: hexSHA256(old)}
	})
	if err != nil {
		*r, j.st.Certifies = was, nil // nothing of the repair is left to commit at the release
	}
	return err
}

// Written records that the manifest Recertify certified, and its _SUCCESS, are written at the
// run's prefix: the release of the lease says so, and the next holder need not look.
func (h *LogHold) Written(runID, repairID string) {
	h.j.mu.Lock()
	defer h.j.mu.Unlock()
	h.j.settled = (&Certificate{RunID: runID, Repair: repairID}).key()
}

// Close releases the lease.
func (h *LogHold) Close() error { return h.j.Close() }
