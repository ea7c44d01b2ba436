package ship

import (
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
)

// KeyRoot is the first segments of every key the service writes, below the destination's
// prefix. The version segment changes only if the layout ever does.
const KeyRoot = "wharf/v1"

// The metadata keys on every shipped object (besides store.MetaSHA256).
const (
	MetaRange   = "wharf-range"   // "first-last": the spool sequence numbers the file holds
	MetaDataset = "wharf-dataset" // the file's dataset
	MetaNode    = "wharf-node"    // the node that shipped it
)

// ObjectKey is the key of f, relative to the destination's prefix:
//
//	wharf/v1/{pipeline}/{dataset}/date=YYYY-MM-DD/hour=HH/{node}_{epoch:016x}_{first:020}_{last:020}.{ext}
//
// The date and hour are f.Time's in UTC. The spool's random epoch keeps two spools (a wiped
// and re-made one, say) on the same node apart; the node id keeps machines apart. A file whose
// clock was not synchronized when it was added (f.Clock is spool.ClockUnsynced) has no
// partition it can be trusted to belong to: it goes under unsynced/ instead of date=/hour=:
//
//	wharf/v1/{pipeline}/{dataset}/unsynced/{node}_{epoch:016x}_{first:020}_{last:020}.{ext}
func ObjectKey(pipeline, node string, epoch uint64, f spool.File) string {
	return KeyRoot + "/" + keyTail(pipeline, node, epoch, f)
}

// ReplayRoot is the first segment of the keys of replays, below the destination's prefix:
// beside KeyRoot, never under it.
const ReplayRoot = "wharf/replays"

// ReplayKey is the key of f, a file of replay's spool: ObjectKey's layout, below
// wharf/replays/{replay}/ instead of wharf/:
//
//	wharf/replays/{replay}/v1/{pipeline}/{dataset}/date=YYYY-MM-DD/hour=HH/{node}_{epoch:016x}_{first:020}_{last:020}.{ext}
//
// Nothing a replay writes is under wharf/v1/, where production's files are.
func ReplayKey(replay, pipeline, node string, epoch uint64, f spool.File) string {
	return ReplayRoot + "/" + replay + "/" + strings.TrimPrefix(KeyRoot, "wharf/") + "/" + keyTail(pipeline, node, epoch, f)
}

// keyTail is a key from the pipeline on.
func keyTail(pipeline, node string, epoch uint64, f spool.File) string {
	name := fmt.Sprintf("%s_%016x_%020d_%020d", node, epoch, f.First, f.Last)
	if ext := strings.TrimPrefix(f.Ext, "."); ext != "" {
		name += "." + ext
	}
	if f.Clock == spool.ClockUnsynced {
		return fmt.Sprintf("%s/%s/unsynced/%s", pipeline, f.Dataset, name)
	}
	t := f.Time.UTC()
	return fmt.Sprintf("%s/%s/date=%s/hour=%02d/%s", pipeline, f.Dataset, t.Format(time.DateOnly), t.Hour(), name)
}

// checkFile refuses a spooled file whose dataset or extension cannot go into a key. The
// spool checks both when a file is added; this guards the key layout on its own.
func checkFile(f spool.File) error {
	if err := CheckSegment("dataset", f.Dataset); err != nil {
		return err
	}
	if ext := strings.TrimPrefix(f.Ext, "."); ext != "" && !segment.MatchString(ext) {
		return fmt.Errorf("extension %q: want letters, digits, '.', '_' or '-'", f.Ext)
	}
	return nil
}

// Metadata is the user metadata of f's object.
func Metadata(node string, f spool.File) map[string]string {
	return map[string]string{
		store.MetaSHA256: strings.ToLower(f.SHA256),
		MetaRange:        fmt.Sprintf("%d-%d", f.First, f.Last),
		MetaDataset:      f.Dataset,
		MetaNode:         node,
	}
}

// contentType guesses the object's content type from the extension: the usual types of the
// files wharf ships, then the system's table, then application/octet-stream.
func contentType(ext string) string {
	ext = strings.ToLower(ext)
	if i := strings.LastIndexByte(ext, '.'); i >= 0 {
		ext = ext[i+1:] // ndjson.gz: the outer layer
	}
	switch ext {
	case "parquet":
		return "application/vnd.apache.parquet"
	case "ndjson", "jsonl":
		return "application/x-ndjson"
	case "csv":
		return "text/csv"
	case "gz":
		return "application/gzip"
	case "zst":
		return "application/zstd"
	}
	if t := mime.TypeByExtension("." + ext); ext != "" && t != "" {
		return t
	}
	return "application/octet-stream"
}
