package export

import (
	"fmt"
	"time"

	"github.com/wharfdata/wharf/dataset"
)

// The types of the dataset contract (package dataset) that an export's options, its journal
// and its results name: the same types, under export's names.
type (
	Mode            = dataset.Mode
	Format          = dataset.Format
	ConsistencyMode = dataset.ConsistencyMode
	Consistency     = dataset.Consistency
	Manifest        = dataset.Manifest
	Part            = dataset.Part
	Range           = dataset.Range
	Bound           = dataset.Bound
	CursorWindow    = dataset.CursorWindow
	SchemaColumn    = dataset.SchemaColumn
)

// The modes, formats and consistency modes an export is configured with.
const (
	ModeFull            = dataset.ModeFull
	ModeDelta           = dataset.ModeDelta
	FormatParquet       = dataset.FormatParquet
	FormatNDJSON        = dataset.FormatNDJSON
	FormatCSV           = dataset.FormatCSV
	ConsistencySnapshot = dataset.ConsistencySnapshot
	ConsistencyChunk    = dataset.ConsistencyChunk
)

// Run statuses in the journal: a manifest's two, and two that only the journal records.
const (
	StatusRunning   = "running"
	StatusSucceeded = dataset.StatusSucceeded
	StatusFailed    = dataset.StatusFailed
	// StatusAbandoned is a journaled run that was still running (killed, never resumed) when a
	// later run of its export started; only the journal records it.
	StatusAbandoned = "abandoned"
)

// boundOf is a chunking key's or cursor's value, as the source's driver returned it, as a
// bound.
func boundOf(v any) (Bound, error) {
	switch x := v.(type) {
	case nil:
		return Bound{}, nil
	case int64:
		return dataset.IntBound(x), nil
	case int32:
		return dataset.IntBound(int64(x)), nil
	case string:
		return dataset.TextBound(x), nil
	case []byte:
		return dataset.TextBound(string(x)), nil
	case time.Time:
		return dataset.TimeBound(x), nil
	}
	return Bound{}, newErr("plan", fmt.Sprintf("%T", v), ErrChunkKey, fmt.Errorf("key value %v is neither an integer, a text nor a time", v))
}
