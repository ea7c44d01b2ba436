package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

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
	ProblemNoManifest      = "manifest_missing"     // no manifest.json: a legacy run
	ProblemManifestInvalid = "manifest_invalid"     // manifest.json is not a wharf manifest
	ProblemSuccessMissing  = "success_missing"      // no _SUCCESS beside the manifest
	ProblemSuccessMismatch = "success_mismatch"     // _SUCCESS is not the sha256 of manifest.json
	ProblemRunFailed       = "run_failed"           // the manifest records a failed run
	ProblemPartMissing     = "part_missing"         // a listed part is gone
	ProblemPartSize        = "part_size_mismatch"   // a listed part has another size (truncated…)
	ProblemPartETag        = "part_etag_mismatch"   // a listed part was rewritten
	ProblemPartHash        = "part_sha256_mismatch" // Deep: a part's bytes hash differently
)

// Validate checks the export at the prefix s serves (prefix names it in the result), touching
// only the store (M5–M7): HEAD _SUCCESS, GET manifest.json, compare _SUCCESS with the sha256
// of the manifest's bytes, HEAD every part (size and ETag), and with deep re-hash every part.
// A prefix that cannot be read (a missing bucket, no access) is ErrVerifyManifestRead, never
// a legacy run; a readable prefix that is not certified returns a Validation with problems
// and a nil error.
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
	for _, p := range m.Parts {
		if err := v.checkPart(ctx, s, p, deep); err != nil {
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

func (v *Validation) checkPart(ctx context.Context, s *store.Store, p Part, deep bool) error {
	info, err := s.Head(ctx, p.Key)
	switch {
	case errors.Is(err, store.ErrNotExist):
		v.add(ProblemPartMissing, p.Key, "part listed in the manifest is missing")
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
	sum, err := hashObject(ctx, s, p.Key)
	if errors.Is(err, store.ErrNotExist) {
		v.add(ProblemPartMissing, p.Key, "part listed in the manifest is missing")
		return nil
	}
	if err != nil {
		return err
	}
	if sum != p.SHA256 {
		v.add(ProblemPartHash, p.Key, "part's bytes hash to sha256 %s, the manifest records %s", sum, p.SHA256)
	}
	return nil
}

func hashObject(ctx context.Context, s *store.Store, key string) (string, error) {
	obj, err := s.Get(ctx, key, nil)
	if err != nil {
		return "", err
	}
	defer obj.Close()
	h := sha256.New()
	if _, err := io.Copy(h, obj); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
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
