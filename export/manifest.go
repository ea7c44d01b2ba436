package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/wharfdata/wharf/store"
)

// The keys of the trust contract, relative to the prefix.
const (
	ManifestKey   = "manifest.json"
	SuccessKey    = "_SUCCESS"
	QuarantineDir = "_quarantine/"
)

// Run statuses, in the manifest and the journal.
const (
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	// StatusAbandoned is a journaled run that was still running (killed, never resumed) when a
	// later run of its export started; only the journal records it.
	StatusAbandoned = "abandoned"
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
	// Definition): two runs with one fingerprint read the same rows the same way.
	Definition string `json:"definition,omitempty"`
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

// SchemaColumn is one column in the manifest.
type SchemaColumn struct {
	Name   string `json:"name"`
	Type   string `json:"type"`    // the Arrow type
	Source string `json:"db_type"` // the source's type with its modifiers ("numeric(38,10)")
}

func schemaColumns(cols []Column) []SchemaColumn {
	out := make([]SchemaColumn, len(cols))
	for i, c := range cols {
		out[i] = SchemaColumn{Name: c.Name, Type: c.Type.String(), Source: c.DBType}
	}
	return out
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

// putManifest writes the manifest, and then, for a succeeded run, _SUCCESS (M1, M2).
func putManifest(ctx context.Context, s *store.Store, m *Manifest) error {
	b, err := m.Encode()
	if err != nil {
		return newErr("manifest", ManifestKey, ErrWrite, err)
	}
	opts := &store.PutOptions{Size: int64(len(b)), ContentType: "application/json"}
	if _, err := s.Put(ctx, ManifestKey, bytes.NewReader(b), opts); err != nil {
		return newErr("manifest", ManifestKey, ErrWrite, explainDiskFull(err, s, ManifestKey))
	}
	if m.Status != StatusSucceeded {
		return nil
	}
	body := SuccessBody(b)
	opts = &store.PutOptions{Size: int64(len(body)), ContentType: "text/plain"}
	if _, err := s.Put(ctx, SuccessKey, bytes.NewReader(body), opts); err != nil {
		return newErr("manifest", SuccessKey, ErrWrite, explainDiskFull(err, s, SuccessKey))
	}
	return nil
}
