package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wharfdata/wharf/store"
)

// Validation is what Validate found at a prefix.
type Validation struct {
	ResolvedPrefix string    `json:"resolved_prefix"`
	Certified      bool      `json:"certified"`
	LegacyRun      bool      `json:"legacy_run"`
	Export         string    `json:"export,omitempty"`
	RunID          string    `json:"run_id,omitempty"`
	Status         string    `json:"status,omitempty"`
	Parts          int       `json:"parts"`
	Rows           int64     `json:"rows"`
	Deep           bool      `json:"deep"`
	Problems       []Problem `json:"problems"`
	Manifest       *Manifest `json:"-"`
}

// Problem is one thing wrong at a prefix.
type Problem struct {
	Code    string `json:"code"` // one of the Problem… constants
	Key     string `json:"key"`
	Message string `json:"message"`
}

// The problems Validate names.
const (
	ProblemNoManifest      = "manifest_missing"            // no manifest.json: a legacy run
	ProblemManifestInvalid = "manifest_invalid"            // manifest.json is not a wharf manifest
	ProblemSuccessMissing  = "success_missing"             // no _SUCCESS beside the manifest
	ProblemSuccessMismatch = "success_mismatch"            // _SUCCESS is not the sha256 of manifest.json
	ProblemRunFailed       = "run_failed"                  // the manifest records a failed run
	ProblemPartMissing     = "part_missing"                // a listed part is gone
	ProblemPartSize        = "part_size_mismatch"          // a listed part has another size (truncated…)
	ProblemPartETag        = "part_etag_mismatch"          // a listed part was rewritten
	ProblemPartHash        = "part_sha256_mismatch"        // Deep: a part's bytes hash differently
	ProblemPartUnreadable  = "part_unreadable"             // the store refuses to read a part, or Deep: it does not decode
	ProblemPartRows        = "part_rows_mismatch"          // Deep: a part holds another number of rows
	ProblemPartSchema      = "part_schema_mismatch"        // Deep: a part's schema is not the manifest's
	ProblemPartUTF8        = "part_invalid_utf8"           // Deep: a string value a reader rejects as not UTF-8
	ProblemPartJSON        = "part_invalid_json"           // Deep: a JSON column's value is not JSON
	ProblemFingerprint     = "schema_fingerprint_mismatch" // the manifest's fingerprint is not its schema's
	ProblemRowsTotal       = "rows_total_mismatch"         // the manifest's rows are not the sum of its parts'
)

// Validate checks the export at the prefix s serves (prefix names it in the result), touching
// only the store (M5–M7): HEAD _SUCCESS, GET manifest.json, compare _SUCCESS with the sha256
// of the manifest's bytes and the manifest's fingerprint and row total with its schema and
// parts, HEAD every part (size and ETag). With deep it also reads every part: re-hashes it,
// and decodes every row as a reader would (arrow-go's Parquet reader), checking the part's
// row count and schema against the manifest and that every string value is valid UTF-8 (and
// every JSON value JSON), so that a part a reader rejects is never certified.
// A prefix that cannot be read (a missing bucket, no access) is ErrVerifyManifestRead, never
// a legacy run; a part the store refuses to read (a symbolic link in a file store) is a
// problem named by its key; a readable prefix that is not certified returns a Validation with
// problems and a nil error.
//
// A manifest logged in a commit log (state: bucket) is certified only when that log records
// it; open reaches the log's store, and without it a logged manifest is not certified.
func Validate(ctx context.Context, s *store.Store, prefix string, deep bool, open ...LogOpener) (*Validation, error) {
	v := &Validation{ResolvedPrefix: prefix, Deep: deep, Problems: []Problem{}}
	success, hasSuccess, err := readSmall(ctx, s, SuccessKey)
	if err != nil {
		return nil, newErr("validate", prefix, ErrVerifyManifestRead, err)
	}
	body, hasManifest, err := readSmall(ctx, s, ManifestKey)
	if err != nil {
		return nil, newErr("validate", prefix, ErrVerifyManifestRead, err)
	}
	if !hasManifest {
		v.LegacyRun = true
		msg := "no manifest.json: not written by wharf, or never finished"
		if hasSuccess {
			msg = fmt.Sprintf("_SUCCESS (%d bytes) without manifest.json: a legacy run (Spark/Hadoop style)", len(success))
		}
		v.add(ProblemNoManifest, ManifestKey, "%s", msg)
		return v, nil
	}
	m, err := DecodeManifest(body)
	if err != nil {
		v.add(ProblemManifestInvalid, ManifestKey, "%v", err)
		return v, nil
	}
	v.Manifest, v.Export, v.RunID, v.Status, v.Parts, v.Rows = m, m.Export, m.RunID, m.Status, len(m.Parts), m.Rows
	v.checkMarker(m, body, success, hasSuccess)
	v.checkManifest(m)
	for _, p := range m.Parts {
		if err := v.checkPart(ctx, s, m, p, deep); err != nil {
			return nil, newErr("validate", prefix, ErrVerifyManifestRead, err)
		}
	}
	if err := v.checkLog(ctx, m, body, open); err != nil {
		return nil, newErr("validate", prefix, ErrVerifyManifestRead, err)
	}
	v.Certified = len(v.Problems) == 0
	return v, nil
}

func (v *Validation) add(code, key, format string, a ...any) {
	v.Problems = append(v.Problems, Problem{Code: code, Key: key, Message: fmt.Sprintf(format, a...)})
}

func (v *Validation) checkMarker(m *Manifest, body, success []byte, hasSuccess bool) {
	if m.Status != StatusSucceeded {
		v.add(ProblemRunFailed, ManifestKey, "run %s %s: %s", m.RunID, m.Status, m.Error)
	}
	want := SuccessBody(body)
	switch {
	case !hasSuccess:
		if m.Status == StatusSucceeded {
			v.add(ProblemSuccessMissing, SuccessKey, "no _SUCCESS beside a succeeded manifest")
		}
	case !bytes.Equal(bytes.TrimSpace(success), want):
		v.add(ProblemSuccessMismatch, SuccessKey,
			"_SUCCESS holds %q but manifest.json hashes to %s: the manifest or the marker was edited, or another writer was here",
			truncate(string(success), 80), want)
	}
}

// checkManifest checks what the manifest says against itself: its fingerprint is its schema's,
// its row total the sum of its parts'.
func (v *Validation) checkManifest(m *Manifest) {
	if fp := SchemaFingerprint(m.Schema); fp != m.SchemaFingerprint {
		v.add(ProblemFingerprint, ManifestKey, "schema_fingerprint is %s, the schema listed hashes to %s", m.SchemaFingerprint, fp)
	}
	var rows int64
	for _, p := range m.Parts {
		rows += p.Rows
	}
	if rows != m.Rows {
		v.add(ProblemRowsTotal, ManifestKey, "rows is %d, the parts listed hold %d", m.Rows, rows)
	}
}

// partFault reports whether err, from reading one part, is that part's problem (the store
// refuses that key: a symbolic link, no permission on it) rather than the store's or the
// prefix's (unavailable, a missing bucket, a cancelled context).
func partFault(err error) bool {
	for _, k := range []error{store.ErrKeyInvalid, store.ErrForbidden, store.ErrUnsupported, store.ErrPreconditionFailed} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

func (v *Validation) checkPart(ctx context.Context, s *store.Store, m *Manifest, p Part, deep bool) error {
	info, err := s.Head(ctx, p.Key)
	switch {
	case errors.Is(err, store.ErrNotExist):
		v.add(ProblemPartMissing, p.Key, "part listed in the manifest is missing")
		return nil
	case err != nil && partFault(err):
		v.add(ProblemPartUnreadable, p.Key, "the store refuses to read the part: %v", err)
		return nil
	case err != nil:
		return err
	case info.Size != p.Size:
		v.add(ProblemPartSize, p.Key, "part is %d bytes, the manifest records %d (truncated or replaced)", info.Size, p.Size)
		return nil
	case p.ETag != "" && info.ETag != p.ETag:
		v.add(ProblemPartETag, p.Key, "part has ETag %q, the manifest records %q: it was rewritten", info.ETag, p.ETag)
		return nil
	}
	if !deep {
		return nil
	}
	err = v.deepCheck(ctx, s, m, p)
	switch {
	case errors.Is(err, store.ErrNotExist):
		v.add(ProblemPartMissing, p.Key, "part listed in the manifest is missing")
		return nil
	case err != nil && partFault(err):
		v.add(ProblemPartUnreadable, p.Key, "the part cannot be read: %v", err)
		return nil
	}
	return err
}

// maxSmall bounds what Validate reads of _SUCCESS and manifest.json.
const maxSmall = 64 << 20

// readSmall reads a small object whole; a missing object is (nil, false, nil).
func readSmall(ctx context.Context, s *store.Store, key string) ([]byte, bool, error) {
	obj, err := s.Get(ctx, key, nil)
	if errors.Is(err, store.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer obj.Close()
	b, err := io.ReadAll(io.LimitReader(obj, maxSmall))
	return b, true, err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// PartURLs returns the URL of every part the manifest lists, in chunk order: what a reader
// reads to read exactly the certified dataset (and no earlier run's parts beside it). prefix
// is the prefix's URL (or a local directory).
func (v *Validation) PartURLs(prefix string) []string {
	if v.Manifest == nil {
		return nil
	}
	base := strings.TrimSuffix(prefix, "/") + "/"
	out := make([]string, len(v.Manifest.Parts))
	for i, p := range v.Manifest.Parts {
		out[i] = base + p.Key
	}
	return out
}

// NotCertified returns nil for a certified validation, and otherwise an ErrNotCertified error
// naming the first problem and how many there are (for a CLI's exit status).
func (v *Validation) NotCertified() error {
	if v.Certified {
		return nil
	}
	p := v.Problems[0]
	return newErr("validate", v.ResolvedPrefix, ErrNotCertified,
		fmt.Errorf("%d problem(s); first: %s %s: %s", len(v.Problems), p.Code, p.Key, p.Message))
}
