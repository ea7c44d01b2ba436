package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The keys of the contract, relative to the prefix.
const (
	ManifestKey = "manifest.json"
	SuccessKey  = "_SUCCESS"
	// QuarantineDir holds objects found where a run's part belongs that its journal does not
	// vouch for: _quarantine/<run_id>/<key>.
	QuarantineDir = "_quarantine/"
	// SupersededDir holds an earlier run's parts moved out of the way of readers of the whole
	// prefix: _superseded/<run_id>/<key>.
	SupersededDir = "_superseded/"
)

// The statuses a manifest records.
const (
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// ManifestVersion is the version of the manifest's layout.
const ManifestVersion = 1

// Manifest describes one run's output at a prefix. It never holds a credential: the source is
// described by host or file only.
type Manifest struct {
	ManifestVersion int    `json:"manifest_version"`
	WharfVersion    string `json:"wharf_version"`
	Export          string `json:"export"`
	RunID           string `json:"run_id"`
	Status          string `json:"status"`
	Error           string `json:"error,omitempty"`
	Source          string `json:"source"`
	Relation        string `json:"relation"` // the table, or "query"
	// Session is the settings a PostgreSQL source was read with (DateStyle, IntervalStyle,
	// TimeZone, extra_float_digits, client_encoding, lc_monetary, server_encoding): the text
	// of the types written as text depends on them, so wharf pins them and records them here.
	Session           map[string]string `json:"session,omitempty"`
	Mode              Mode              `json:"mode"`
	Format            Format            `json:"format"`
	ChunkKey          string            `json:"chunk_key"`
	Cursor            *CursorWindow     `json:"cursor,omitempty"`
	StartedAt         time.Time         `json:"started_at"`
	FinishedAt        time.Time         `json:"finished_at"`
	DurationMS        int64             `json:"duration_ms"`
	SchemaFingerprint string            `json:"schema_fingerprint"`
	Schema            []SchemaColumn    `json:"schema"`
	Rows              int64             `json:"rows"`
	Bytes             int64             `json:"bytes"`
	Parts             []Part            `json:"parts"`
	// Log is set when the run was journaled in a commit log (state: bucket): the manifest is
	// certified only when that log records it.
	Log *LogRef `json:"log,omitempty"`
	// Consistency says what state of the source the parts were read from: one snapshot (and
	// which), or each chunk its own (absent in manifests written before wharf recorded it).
	Consistency *Consistency `json:"consistency,omitempty"`
	// Definition is the fingerprint of the export's definition the run was made to (the
	// source, relation, chunk key, mode, cursor column, format and value options; see
	// export.Definition): two runs with one fingerprint read the same rows the same way.
	Definition string `json:"definition,omitempty"`
	// Superseded lists the parts a repair replaced (Repairs): still at the prefix, beside the
	// parts that replaced them, and never read as the dataset, which is Parts alone.
	Superseded []SupersededPart `json:"superseded,omitempty"`
	// Repairs records each repair of the run, oldest first.
	Repairs []Repair `json:"repairs,omitempty"`
}

// SupersededPart is a part a repair replaced, and the key of the part that replaced it.
type SupersededPart struct {
	Part
	By       string `json:"by"`        // the key of the part that replaced it
	RepairID string `json:"repair_id"` // the repair that replaced it (Repair.ID)
}

// Repair records one repair of a run: the chunks whose parts it read again from the source.
type Repair struct {
	ID     string    `json:"id"` // a run id of its own: the new parts are named for it
	At     time.Time `json:"at"`
	Chunks []int     `json:"chunks"`
}

// CursorWindow is the delta window a run exported: cursor > From and cursor <= To.
type CursorWindow struct {
	Column string `json:"column"`
	From   Bound  `json:"from"`
	To     Bound  `json:"to"`
	// Held says why To is below the largest cursor value when the run started: a transaction
	// open then, which may still commit rows at most that value.
	Held string `json:"held,omitempty"`
}

// Part is one part of a run, as the manifest lists it (and export's journal records it).
type Part struct {
	Key    string `json:"key"` // relative to the prefix
	Chunk  int    `json:"chunk"`
	Rows   int64  `json:"rows"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	ETag   string `json:"etag"`
	Range  Range  `json:"range"`
}

// LogRef, in a manifest, says that the run was journaled in a commit log and which entry
// records it: a logged manifest is certified only when that entry is committed.
type LogRef struct {
	Root  string `json:"root"` // the URL of the store the log is in
	Name  string `json:"name"` // the lease and log name: the export
	Seq   int64  `json:"seq"`
	Fence int64  `json:"fence"`
}

// SchemaColumn is one column in the manifest.
type SchemaColumn struct {
	Name   string `json:"name"`
	Type   string `json:"type"`    // the Arrow type
	Source string `json:"db_type"` // the source's type with its modifiers ("numeric(38,10)")
}

// SchemaFingerprint is "sha256:" and the hex sha256 of the columns' names and Arrow types.
func SchemaFingerprint(cols []SchemaColumn) string {
	var b strings.Builder
	for _, c := range cols {
		fmt.Fprintf(&b, "%s\x00%s\n", c.Name, c.Type)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Encode returns the manifest's bytes: indented JSON with a final newline.
func (m *Manifest) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// DecodeManifest parses manifest bytes.
func DecodeManifest(b []byte) (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m.ManifestVersion == 0 || m.RunID == "" {
		return nil, fmt.Errorf("not a wharf manifest (no manifest_version or run_id)")
	}
	return &m, nil
}

// SuccessBody is the content of _SUCCESS for manifest bytes b: the hex sha256 of b.
func SuccessBody(b []byte) []byte {
	sum := sha256.Sum256(b)
	return []byte(hex.EncodeToString(sum[:]))
}

// Mode is how a run selected rows.
type Mode string

// The modes.
const (
	ModeFull  Mode = "full"  // every row, every run
	ModeDelta Mode = "delta" // rows whose cursor column is past the last successful run's cursor
)

// Format is the file format of the parts.
type Format string

// The formats.
const (
	FormatParquet Format = "parquet" // zstd-compressed Parquet (the default)
	FormatNDJSON  Format = "ndjson"  // one JSON object per line
	FormatCSV     Format = "csv"     // RFC 4180 with a header line
	// FormatLines is records of any bytes, each ending in '\n': not an export's format but a
	// backfill's, whose records are whatever its source objects held. Deep validation checks
	// a lines part's compression, framing and row count, never its records' content.
	FormatLines Format = "lines"
)

// Ext is the file extension of a part in f.
func (f Format) Ext() string {
	switch f {
	case FormatNDJSON:
		return ".ndjson"
	case FormatCSV:
		return ".csv"
	}
	return ".parquet"
}

// ConsistencyMode is what state of the source a run's chunks are read from.
type ConsistencyMode string

// The consistency modes.
const (
	// ConsistencySnapshot: every chunk of a run, and its plan, read from one snapshot of the
	// source, so that every row is in the dataset exactly once, as it was at that instant.
	ConsistencySnapshot ConsistencyMode = "snapshot"
	// ConsistencyChunk: each chunk read in its own short transaction; a row whose chunk key
	// changes during the run can be in two chunks or none.
	ConsistencyChunk ConsistencyMode = "chunk"
)

// Consistency, in a manifest, says what state of the source the parts were read from.
type Consistency struct {
	// Mode is what the parts are: "snapshot" only when every part of the run was read from
	// one snapshot, "chunk" otherwise.
	Mode ConsistencyMode `json:"mode"`
	// Requested is the export's configured mode when the run could not keep it: a resumed
	// snapshot run reads its remaining chunks from a new snapshot (the old one ended with the
	// process that held it), so its parts are not of one snapshot.
	Requested ConsistencyMode `json:"requested,omitempty"`
	// Snapshot is, on PostgreSQL in mode snapshot, the id pg_export_snapshot gave the snapshot
	// every chunk imported; PGSnapshot is that snapshot as pg_current_snapshot() writes it
	// (xmin:xmax:xip…), which says for good which transactions the parts hold.
	Snapshot   string `json:"snapshot,omitempty"`
	PGSnapshot string `json:"pg_snapshot,omitempty"`
	// TakenAt is when the snapshot was taken, by the source's clock on PostgreSQL.
	TakenAt time.Time `json:"taken_at,omitzero"`
}
