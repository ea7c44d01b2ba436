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
		part, err := writePart(ctx, dst, key, e.Format, schemaOf(cols),
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
