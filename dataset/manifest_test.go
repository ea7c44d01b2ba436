package dataset

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

// everyField is a manifest with every field set, whose bytes testdata/manifest.json holds
// (written by export's Encode before the contract moved here): the layout readers rely on.
func everyField() *Manifest {
	at := time.Date(2026, 1, 31, 2, 3, 4, 500_000_000, time.UTC)
	m := &Manifest{ManifestVersion: ManifestVersion, WharfVersion: "v1.2.3", Export: "orders", RunID: "20260131T020304Z-abcdef",
		Status: StatusFailed, Error: "boom", Source: "postgres://db.example:5432/shop", Relation: "orders",
		Session: map[string]string{"TimeZone": "UTC", "DateStyle": "ISO, MDY"}, Mode: ModeDelta, Format: FormatCSV, ChunkKey: "id",
		Cursor:    &CursorWindow{Column: "updated_at", From: TimeBound(at), To: TimeBound(at.Add(time.Hour)), Held: "a transaction"},
		StartedAt: at, FinishedAt: at.Add(2 * time.Second), DurationMS: 2000,
		Schema: []SchemaColumn{{Name: "id", Type: "int64", Source: "bigint"}, {Name: "v", Type: "utf8", Source: "text"}},
		Rows:   3, Bytes: 42,
		Parts: []Part{{Key: "part-20260131T020304Z-abcdef-00000.csv", Chunk: 0, Rows: 2, Size: 30, SHA256: "ab", ETag: `"e1"`, Range: Range{Lo: IntBound(1), Hi: IntBound(9)}},
			{Key: "part-20260131T020304Z-abcdef-00001.csv", Chunk: 1, Rows: 1, Size: 12, SHA256: "cd", ETag: `"e2"`, Range: Range{Lo: TextBound("a"), Null: true}}},
		Log:         &LogRef{Root: "s3://lake/orders/", Name: "orders", Seq: 7, Fence: 3},
		Consistency: &Consistency{Mode: ConsistencyChunk, Requested: ConsistencySnapshot, Snapshot: "00000003-1", PGSnapshot: "10:12:11", TakenAt: at},
		Definition:  "sha256:def"}
	m.SchemaFingerprint = SchemaFingerprint(m.Schema)
	return m
}

// The manifest's bytes, and so _SUCCESS, are what they were when export owned them: every
// field name, the indentation, the final newline; decoding them and encoding again gives
// the same bytes.
func TestManifestBytesAreTheContracts(t *testing.T) {
	want, err := os.ReadFile("testdata/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := everyField().Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Encode wrote\n%s\nwant testdata/manifest.json:\n%s", got, want)
	}
	if s := string(SuccessBody(got)); s != "bb2691421f714ec4d1cf6df4b63a353e43ff0baae43b716ff576aec57f639a68" {
		t.Fatalf("SuccessBody = %s", s)
	}
	m, err := DecodeManifest(want)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := m.Encode(); err != nil || !bytes.Equal(again, want) {
		t.Fatalf("decoded and encoded again: %v\n%s", err, again)
	}
	if _, err := DecodeManifest([]byte(`{"export":"x"}`)); err == nil || !strings.Contains(err.Error(), "not a wharf manifest") {
		t.Fatalf("a manifest without version or run id: %v", err)
	}
}

// put writes m and, for a succeeded run, its _SUCCESS, as a job writes them.
func put(t *testing.T, s *store.Store, m *Manifest) {
	t.Helper()
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string][]byte{ManifestKey: b}
	if m.Status == StatusSucceeded {
		objs[SuccessKey] = SuccessBody(b)
	}
	for key, body := range objs {
		if _, err := s.Put(context.Background(), key, bytes.NewReader(body), nil); err != nil {
			t.Fatal(err)
		}
	}
}

// A deep validation reads a part with its format's decoder; a part whose format no linked
// decoder reads (Parquet, in a program without export) is not certified, never passed
// unread. Shallow validation needs no decoder.
func TestDeepValidateWithoutTheFormatsDecoder(t *testing.T) {
	ctx := context.Background()
	s := store.New(mem.New(), nil)
	body := "PAR1 not read\n"
	info, err := s.Put(ctx, "part-a.parquet", strings.NewReader(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &Manifest{ManifestVersion: ManifestVersion, RunID: "r", Status: StatusSucceeded, Format: FormatParquet,
		SchemaFingerprint: SchemaFingerprint(nil), Rows: 1, Parts: []Part{{Key: "part-a.parquet", Rows: 1, Size: info.Size,
			ETag: info.ETag}}}
	m.Parts[0].SHA256 = mustHash(t, s, "part-a.parquet")
	put(t, s, m)
	v, err := Validate(ctx, s, "mem://x/", false)
	if err != nil || !v.Certified {
		t.Fatalf("shallow: %v %+v", err, v)
	}
	v, err = Validate(ctx, s, "mem://x/", true)
	if err != nil || v.Certified || len(v.Problems) != 1 || v.Problems[0].Code != ProblemPartUnreadable ||
		!strings.Contains(v.Problems[0].Message, `no decoder of format "parquet"`) {
		t.Fatalf("deep: %v %+v", err, v)
	}
	// The lines decoder is dataset's own: the same bytes as lines are read and certified.
	m.Format = FormatLines
	put(t, s, m)
	if v, err = Validate(ctx, s, "mem://x/", true); err != nil || !v.Certified {
		t.Fatalf("deep, as lines: %v %+v", err, v)
	}
}

func mustHash(t *testing.T, s *store.Store, key string) string {
	t.Helper()
	info, err := s.Head(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := HashObject(context.Background(), s, key, info.ETag)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// A format has one decoder: a second registration, or a nil one, is a program's bug.
func TestRegisterDecoderTwicePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"twice": func() { RegisterDecoder(FormatLines, decodeLines) },
		"nil":   func() { RegisterDecoder("other", nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
