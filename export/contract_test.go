package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

func TestValidateNamesTampering(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, dir string, parts []Part)
		code   string
		deep   bool
	}{
		{"part deleted", func(t *testing.T, dir string, p []Part) { must(t, os.Remove(filepath.Join(dir, p[1].Key))) }, dataset.ProblemPartMissing, false},
		{"part truncated", func(t *testing.T, dir string, p []Part) { must(t, os.Truncate(filepath.Join(dir, p[1].Key), 10)) }, dataset.ProblemPartSize, false},
		{"part same-size rewrite", func(t *testing.T, dir string, p []Part) {
			path := filepath.Join(dir, p[1].Key)
			b, _ := os.ReadFile(path)
			b[len(b)/2] ^= 0xff
			must(t, os.WriteFile(path, b, 0o644))
		}, dataset.ProblemPartETag, false},
		{"manifest edited", func(t *testing.T, dir string, _ []Part) {
			path := filepath.Join(dir, dataset.ManifestKey)
			b, _ := os.ReadFile(path)
			must(t, os.WriteFile(path, []byte(strings.Replace(string(b), `"rows": 100`, `"rows": 101`, 1)), 0o644))
		}, dataset.ProblemSuccessMismatch, false},
		{"_SUCCESS edited", func(t *testing.T, dir string, _ []Part) {
			must(t, os.WriteFile(filepath.Join(dir, dataset.SuccessKey), []byte("0000"), 0o644))
		}, dataset.ProblemSuccessMismatch, false},
		{"_SUCCESS removed", func(t *testing.T, dir string, _ []Part) { must(t, os.Remove(filepath.Join(dir, dataset.SuccessKey))) }, dataset.ProblemSuccessMissing, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, 100, 30)
			res := f.mustRun(t)
			c.tamper(t, f.prefix(), res.Parts)
			v := f.validate(t, c.deep)
			if v.Certified || !hasProblem(v, c.code) {
				t.Fatalf("want problem %s, got %+v", c.code, v.Problems)
			}
			if v.NotCertified() == nil || !errors.Is(v.NotCertified(), dataset.ErrNotCertified) {
				t.Fatal("NotCertified() is not dataset.ErrNotCertified")
			}
		})
	}
}

func TestValidateDeepFindsRewriteWithSameETag(t *testing.T) {
	s := memStore(t)
	body := []byte("parquet bytes")
	info, _ := s.Put(context.Background(), "p1", strings.NewReader(string(body)), nil)
	m := &Manifest{ManifestVersion: 1, RunID: "r", Status: StatusSucceeded, SchemaFingerprint: dataset.SchemaFingerprint(nil),
		Parts: []Part{{Key: "p1", Size: info.Size, ETag: info.ETag, SHA256: strings.Repeat("0", 64)}}}
	must(t, putManifest(context.Background(), s, m))
	v, err := dataset.Validate(context.Background(), s, "mem://x", false)
	if err != nil || !v.Certified {
		t.Fatalf("plain validate: %v %+v", err, v)
	}
	v, err = dataset.Validate(context.Background(), s, "mem://x", true)
	if err != nil || v.Certified || !hasProblem(v, dataset.ProblemPartHash) {
		t.Fatalf("deep validate: %v %+v", err, v)
	}
}

func TestValidateLegacyAndMissingBucket(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, dataset.SuccessKey), nil, 0o644)) // Spark/Hadoop style
	v, err := dataset.ValidateURL(context.Background(), "file://"+dir, nil, false)
	if err != nil || !v.LegacyRun || v.Certified {
		t.Fatalf("legacy: %v %+v", err, v)
	}
	_, err = dataset.ValidateURL(context.Background(), "file://"+dir+"/missing", nil, false)
	if !errors.Is(err, dataset.ErrVerifyManifestRead) || !errors.Is(err, store.ErrBucketMissing) || errcode.NameOf(err) != "WHARF_VERIFY_MANIFEST_READ_ERROR" {
		t.Fatalf("missing bucket: %v (code %s)", err, errcode.NameOf(err))
	}
}

// breakRow makes row id fail to convert (a DECIMAL holding text), so the chunk holding it fails.
func breakRow(t *testing.T, f *fixture, id int, bad bool) {
	db := openDB(t, f.db)
	v := "abc"
	if !bad {
		v = "1.50"
	}
	exec(t, db, `UPDATE t SET price = ? WHERE id = ?`, v, id)
}

// failAt makes row id unreadable and runs one chunk at a time, which must fail there; it
// returns the failed run and its options, for a resume to finish once the row is mended.
func failAt(t *testing.T, f *fixture, id int) (*Result, Options) {
	t.Helper()
	breakRow(t, f, id, true)
	o := f.opts()
	o.Parallel = 1
	res, err := f.run(t, o)
	if err == nil {
		t.Fatal("the run with a broken row succeeded")
	}
	return res, o
}

func TestFailureAfterPartsRemovesSuccessAndNamesParts(t *testing.T) {
	f := newFixture(t, 100, 10)
	f.mustRun(t) // a complete export with _SUCCESS
	breakRow(t, f, 55, true)
	o := f.opts()
	o.Parallel = 1
	res, err := f.run(t, o)
	if !errors.Is(err, ErrValueRefused) || !strings.Contains(err.Error(), `"price"`) || !strings.Contains(err.Error(), "key 55") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.prefix(), dataset.SuccessKey)); !os.IsNotExist(err) {
		t.Fatal("_SUCCESS still present after a failed run that wrote parts")
	}
	v := f.validate(t, false)
	if v.Certified || v.Status != StatusFailed || v.RunID != res.RunID || v.Parts != 5 {
		t.Fatalf("validation: %+v", v)
	}
}

func TestResumeRefusedOnCompletePrefix(t *testing.T) {
	f := newFixture(t, 20, 10)
	f.mustRun(t)
	o := f.opts()
	o.Resume = true
	_, err := f.run(t, o)
	if !errors.Is(err, ErrDestAlreadyComplete) || errcode.NameOf(err) != "WHARF_DEST_ALREADY_COMPLETE" {
		t.Fatalf("err = %v", err)
	}
	o.Force = true
	res, err := f.run(t, o)
	if err != nil || res.Status != StatusSucceeded {
		t.Fatalf("forced: %v", err)
	}
	if !f.validate(t, true).Certified {
		t.Fatal("not certified after --force")
	}
}

func TestResumeSkipsRewritesAndQuarantines(t *testing.T) {
	f := newFixture(t, 100, 10)
	first, o := failAt(t, f, 55)
	// An untracked object where chunk 7's part belongs, and chunk 2's committed part corrupted.
	intruder := filepath.Join(f.prefix(), partKey(first.RunID, 7, FormatParquet))
	must(t, os.WriteFile(intruder, []byte("not ours"), 0o644))
	must(t, os.Truncate(filepath.Join(f.prefix(), partKey(first.RunID, 2, FormatParquet)), 5))
	breakRow(t, f, 55, false)
	o.Resume = true
	res, err := f.run(t, o)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if res.RunID != first.RunID || !res.Resumed || res.Rows != 100 || len(res.Parts) != 10 {
		t.Fatalf("resume result: %+v", res)
	}
	wantSkipped := []string{partKey(first.RunID, 0, FormatParquet), partKey(first.RunID, 1, FormatParquet),
		partKey(first.RunID, 3, FormatParquet), partKey(first.RunID, 4, FormatParquet)}
	if !slices.Equal(res.Skipped, wantSkipped) {
		t.Fatalf("skipped %v, want %v", res.Skipped, wantSkipped)
	}
	q := filepath.Join(f.prefix(), dataset.QuarantineDir, first.RunID, partKey(first.RunID, 7, FormatParquet))
	if b, err := os.ReadFile(q); err != nil || string(b) != "not ours" {
		t.Fatalf("intruder not quarantined verbatim at %s: %v %q", q, err, b)
	}
	if len(res.Quarantined) != 2 {
		t.Fatalf("quarantined %v", res.Quarantined)
	}
	if v := f.validate(t, true); !v.Certified || v.Rows != 100 {
		t.Fatalf("after resume: %+v", v)
	}
}

func TestDeltaCursor(t *testing.T) {
	f := newFixture(t, 30, 10)
	f.exp.Mode, f.exp.CursorColumn = ModeDelta, "id"
	f.exp.Destination = "file://" + f.dir + "/{export}/{run_id}/"
	ctx := context.Background()
	r1 := f.mustRun(t)
	if r1.Rows != 30 {
		t.Fatalf("first delta run: %d rows", r1.Rows)
	}
	db := openDB(t, f.db)
	insertRows(t, db, 31, 45)
	breakRow(t, f, 40, true)
	if _, err := f.run(t, f.opts()); err == nil {
		t.Fatal("failing delta run succeeded")
	}
	j, _ := OpenJournal(ctx, f.state)
	cur, _ := j.Cursor(ctx, "orders")
	j.Close()
	if cur.Value() != int64(30) {
		t.Fatalf("cursor moved on a failed run: %v", cur)
	}
	breakRow(t, f, 40, false)
	r3 := f.mustRun(t)
	if r3.Rows != 15 {
		t.Fatalf("third run exported %d rows, want 15 (31..45)", r3.Rows)
	}
	v, err := dataset.ValidateURL(ctx, r3.Prefix, nil, true)
	if err != nil || !v.Certified || v.Rows != 15 || v.Manifest.Cursor.From.Value() != int64(30) {
		t.Fatalf("delta manifest: %v %+v", err, v)
	}
	if r4 := f.mustRun(t); r4.Rows != 0 || r4.Status != StatusSucceeded {
		t.Fatalf("empty delta run: %+v", r4)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
