package dataset

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/wharfdata/wharf/errcode"
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
	Hashed         bool      `json:"hashed"` // every part re-hashed: Deep, or a store whose ETags do not prove content
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
	ProblemPrefixEmpty     = "prefix_empty"                // nothing at all at the prefix: no run, legacy or not
	ProblemRunUnfinished   = "run_unfinished"              // wharf's parts without manifest.json: a run killed before it wrote one
	ProblemManifestInvalid = "manifest_invalid"            // manifest.json is not a wharf manifest
	ProblemSuccessMissing  = "success_missing"             // no _SUCCESS beside the manifest
	ProblemSuccessMismatch = "success_mismatch"            // _SUCCESS is not the sha256 of manifest.json
	ProblemRunFailed       = "run_failed"                  // the manifest records a failed run
	ProblemPartMissing     = "part_missing"                // a listed part is gone
	ProblemPartSize        = "part_size_mismatch"          // a listed part has another size (truncated…)
	ProblemPartETag        = "part_etag_mismatch"          // a listed part was rewritten
	ProblemPartHash        = "part_sha256_mismatch"        // Deep or Hashed: a part's bytes hash differently
	ProblemPartUnreadable  = "part_unreadable"             // the store refuses to read a part, or Deep: it does not decode
	ProblemPartRows        = "part_rows_mismatch"          // Deep: a part holds another number of rows
	ProblemPartSchema      = "part_schema_mismatch"        // Deep: a part's schema is not the manifest's
	ProblemPartUTF8        = "part_invalid_utf8"           // Deep: a string value a reader rejects as not UTF-8
	ProblemPartJSON        = "part_invalid_json"           // Deep: a JSON column's value is not JSON
	ProblemFingerprint     = "schema_fingerprint_mismatch" // the manifest's fingerprint is not its schema's
	ProblemRowsTotal       = "rows_total_mismatch"         // the manifest's rows are not the sum of its parts'
)

// Validate checks the dataset at the prefix s serves (prefix names it in the result), touching
// only the store (M5–M7): HEAD _SUCCESS, GET manifest.json, compare _SUCCESS with the sha256
// of the manifest's bytes and the manifest's fingerprint and row total with its schema and
// parts, HEAD every part (size and ETag). On a store whose ETags do not prove content
// (store.VerifyByHash: a local directory) it also reads and re-hashes every part. With deep it
// reads every part on every store: re-hashes it,
// and decodes every row as a reader would (the Decoder registered for the manifest's format:
// export registers Parquet's and CSV's), checking the part's row count and schema against the
// manifest and that every string value is valid UTF-8 (and every JSON value JSON), so that a
// part a reader rejects is never certified.
// A prefix that cannot be read (a missing bucket, no access) is ErrVerifyManifestRead, never
// a legacy run; a part the store refuses to read (a symbolic link in a file store) is a
// problem named by its key; a readable prefix that is not certified returns a Validation with
// problems and a nil error.
//
// A manifest logged in a commit log (state: bucket) is certified only when that log records
// it; open reaches the log's store, and without it a logged manifest is not certified.
func Validate(ctx context.Context, s *store.Store, prefix string, deep bool, open ...LogOpener) (*Validation, error) {
	v := &Validation{ResolvedPrefix: prefix, Deep: deep, Hashed: deep || s.VerifyByHash(), Problems: []Problem{}}
	success, hasSuccess, err := ReadSmall(ctx, s, SuccessKey)
	if err != nil {
		return nil, errcode.E("validate", prefix, ErrVerifyManifestRead, err)
	}
	body, hasManifest, err := ReadSmall(ctx, s, ManifestKey)
	if err != nil {
		return nil, errcode.E("validate", prefix, ErrVerifyManifestRead, err)
	}
	if !hasManifest {
		if err := v.noManifest(ctx, s, success, hasSuccess); err != nil {
			return nil, errcode.E("validate", prefix, ErrVerifyManifestRead, err)
		}
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
	if err := v.checkParts(ctx, s, m, deep); err != nil {
		return nil, errcode.E("validate", prefix, ErrVerifyManifestRead, err)
	}
	if err := v.checkLog(ctx, m, body, open); err != nil {
		return nil, errcode.E("validate", prefix, ErrVerifyManifestRead, err)
	}
	v.Certified = len(v.Problems) == 0
	return v, nil
}

// ValidateURL opens the prefix at prefixURL with cfg and validates it (see Validate).
func ValidateURL(ctx context.Context, prefixURL string, cfg *store.Config, deep bool) (*Validation, error) {
	s, err := store.Open(ctx, prefixURL, cfg)
	if err != nil {
		return nil, errcode.E("validate", prefixURL, ErrVerifyManifestRead, err)
	}
	defer s.Close()
	return Validate(ctx, s, prefixURL, deep, StoreOpener(cfg))
}

// wharfPart matches the name of a part wharf writes: part-<run_id>-<chunk>.<ext>.
var wharfPart = regexp.MustCompile(`^part-(\d{8}T\d{6}Z-[0-9a-f]{6})-\d{5,}\.`)

// noManifest tells what a prefix without manifest.json holds (M6), from one page of its
// listing: nothing at all (no run of any kind: a wrong date, run id or prefix); parts wharf
// names, so a wharf run killed before it wrote a manifest (resume it); or anything else, a
// legacy run (Spark's empty _SUCCESS, files put there by hand), which is not certified and,
// unlike the other two, not a failure.
func (v *Validation) noManifest(ctx context.Context, s *store.Store, success []byte, hasSuccess bool) error {
	page, err := s.List(ctx, &store.ListOptions{Delimiter: "/"})
	if err != nil {
		return err
	}
	if len(page.Objects) == 0 && len(page.Prefixes) == 0 && !hasSuccess {
		v.add(ProblemPrefixEmpty, "", "nothing at the prefix: no run was written here (check the date, the run id or the prefix)")
		return nil
	}
	for _, o := range page.Objects {
		if m := wharfPart.FindStringSubmatch(o.Key); m != nil {
			v.add(ProblemRunUnfinished, o.Key, "wharf's part of run %s without manifest.json: the run was killed before it wrote one (wharf export --resume continues it)", m[1])
			return nil
		}
	}
	v.LegacyRun = true
	msg := "no manifest.json: a legacy run, not written by wharf"
	if hasSuccess {
		msg = fmt.Sprintf("_SUCCESS (%d bytes) without manifest.json: a legacy run (Spark/Hadoop style)", len(success))
	}
	v.add(ProblemNoManifest, ManifestKey, "%s", msg)
	return nil
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

// partsAtOnce bounds the parts checked at once (a HEAD each, and on a local directory a
// re-hash). A deep check reads one part at a time: it decodes whole row groups.
const partsAtOnce = 4

// checkParts checks every part of m, adding their problems in the manifest's part order
// whatever order the checks end in. The first error in part order is returned.
func (v *Validation) checkParts(ctx context.Context, s *store.Store, m *Manifest, deep bool) error {
	if deep {
		for _, p := range m.Parts {
			if err := v.checkPart(ctx, s, m, p, true); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	found := make([][]Problem, len(m.Parts))
	errs := make([]error, len(m.Parts))
	slots := make(chan struct{}, partsAtOnce)
	var wg sync.WaitGroup
	for i, p := range m.Parts {
		slots <- struct{}{}
		if ctx.Err() != nil {
			<-slots
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			pv := &Validation{Hashed: v.Hashed}
			if errs[i] = pv.checkPart(ctx, s, m, p, false); errs[i] != nil {
				cancel()
			}
			found[i] = pv.Problems
		})
	}
	wg.Wait()
	for _, err := range errs { // the first failure in part order, before any cancellation it caused
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // stopped before every part was checked: nothing is certified
	}
	for _, pr := range found {
		v.Problems = append(v.Problems, pr...)
	}
	return nil
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
	switch {
	case deep:
		err = v.deepCheck(ctx, s, m, p)
	case v.Hashed:
		err = v.hashCheck(ctx, s, p, info.ETag)
	default:
		return nil
	}
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

// hashCheck re-hashes a part whose size and ETag matched, on a store where that does not
// prove its bytes.
func (v *Validation) hashCheck(ctx context.Context, s *store.Store, p Part, etag string) error {
	sum, err := HashObject(ctx, s, p.Key, etag)
	if err != nil {
		return err
	}
	if sum != p.SHA256 {
		v.add(ProblemPartHash, p.Key, "part's bytes hash to sha256 %s, the manifest records %s: it was changed in place (its size and ETag are the manifest's)", sum, p.SHA256)
	}
	return nil
}

// HashObject returns the hex sha256 of the object at key, read pinned to etag: the sum a
// part's recorded SHA256 is compared with where its size and ETag do not prove its bytes.
func HashObject(ctx context.Context, s *store.Store, key, etag string) (string, error) {
	obj, err := s.Get(ctx, key, &store.GetOptions{IfMatch: etag})
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

// ReadSmall reads a small object of the contract (manifest.json, _SUCCESS) whole, at most
// 64 MiB of it; a missing object is (nil, false, nil).
func ReadSmall(ctx context.Context, s *store.Store, key string) ([]byte, bool, error) {
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
	where := p.Code
	if p.Key != "" {
		where += " " + p.Key
	}
	return errcode.E("validate", v.ResolvedPrefix, ErrNotCertified,
		fmt.Errorf("%d problem(s); first: %s: %s", len(v.Problems), where, p.Message))
}
