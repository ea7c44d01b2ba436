package backfill

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

// parts reads every part of the manifest at dst and returns the records they hold, and the
// parts' bytes by key.
func parts(t *testing.T, dst *store.Store) ([]byte, map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	v, err := dataset.Validate(ctx, dst, "out/", true)
	if err != nil || !v.Certified {
		t.Fatalf("validate: %v %+v", err, v)
	}
	var all bytes.Buffer
	raw := map[string][]byte{}
	for _, p := range v.Manifest.Parts {
		obj, err := dst.Get(ctx, p.Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(obj)
		obj.Close()
		raw[p.Key] = b
		dec, _ := zstd.NewReader(bytes.NewReader(b))
		n, err := io.Copy(&all, dec)
		dec.Close()
		if err != nil || int64(bytes.Count(all.Bytes()[all.Len()-int(n):], []byte("\n"))) != p.Rows {
			t.Fatalf("part %s: %v, or not %d rows", p.Key, err, p.Rows)
		}
	}
	return all.Bytes(), raw
}

func TestStoreSinkWritesCertifiedPartsExactlyOnce(t *testing.T) {
	src, dst := memStore(), memStore()
	c := fill(t, src, "logs/", 40, 300, "plain", "gzmulti", "zstmulti")
	cfg := testConfig("mem://src/logs/", "mem://dst/out/")
	out := dst.Sub("out")
	if _, err := runJob(context.Background(), t, cfg, NewSolo(), src, NewStoreSink(out, cfg.To, cfg.Job, "test"), false); err != nil {
		t.Fatal(err)
	}
	records, first := parts(t, out)
	c.check(t, records, true)

	// A replay (a fresh coordinator: every split read again) rewrites the same parts: the
	// same keys, the same bytes, counted as written.
	cfg.ReadRequest, cfg.ReadWindow, cfg.MaxInFlight = 100<<10, 100<<10, 1 // other reads, the same records
	if _, err := runJob(context.Background(), t, cfg, NewSolo(), src, NewStoreSink(out, cfg.To, cfg.Job, "test"), false); err != nil {
		t.Fatal(err)
	}
	_, second := parts(t, out)
	if len(first) != len(second) || len(first) < 6 {
		t.Fatalf("%d parts, then %d", len(first), len(second))
	}
	for k, b := range first {
		if !bytes.Equal(b, second[k]) {
			t.Fatalf("part %s changed on replay", k)
		}
	}
}

func TestStoreSinkRefusesAPartHoldingOtherRecords(t *testing.T) {
	src, dst := memStore(), memStore()
	fill(t, src, "logs/", 3, 10, "plain")
	cfg := testConfig("mem://src/logs/", "mem://dst/out/")
	out := dst.Sub("out")
	objs, _ := List(context.Background(), src, "logs/")
	sp := Pack(objs, cfg.SplitBytes, cfg.SplitMaxObjects)[0]
	put(t, out, PartKey(sp.ID), encode(t, "zst", []string{`{"foreign":1}`}))
	_, err := runJob(context.Background(), t, cfg, NewSolo(), src, NewStoreSink(out, cfg.To, cfg.Job, "test"), false)
	if !errors.Is(err, ErrPartCollision) || !strings.Contains(err.Error(), PartKey(sp.ID)) {
		t.Fatalf("Run = %v, want ErrPartCollision naming the part", err)
	}
}

func TestQuarantineWritesAFailedManifestWithoutSuccess(t *testing.T) {
	src, dst := memStore(), memStore()
	fill(t, src, "logs/", 5, 10, "plain")
	put(t, src, "logs/zz-bad.gz", []byte("not gzip at all"))
	cfg := testConfig("mem://src/logs/", "mem://dst/out/")
	out := dst.Sub("out")
	_, err := runJob(context.Background(), t, cfg, NewSolo(), src, NewStoreSink(out, cfg.To, cfg.Job, "test"), false)
	if !errors.Is(err, ErrQuarantined) {
		t.Fatalf("Run = %v", err)
	}
	v, verr := dataset.Validate(context.Background(), out, "out/", false)
	if verr != nil || v.Certified || v.Status != dataset.StatusFailed {
		t.Fatalf("validate: %v %+v; want a failed, uncertified run", verr, v)
	}
	if _, err := out.Head(context.Background(), dataset.SuccessKey); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("_SUCCESS: %v, want none", err)
	}
}

// A member deleted after an earlier run wrote the split's part whole (and, say, crashed
// before committing it) is quarantined; the split's part without it is named by the members
// it holds, so it never meets the earlier part's key, and holds every other record once.
func TestAPartWithoutAQuarantinedObjectHasAKeyOfItsOwn(t *testing.T) {
	ctx := context.Background()
	b := &onGet{Bucket: mem.New(), hook: map[string]func(){}}
	src, dst := store.New(b, nil), memStore()
	c := fill(t, src, "logs/", 5, 40, "plain", "gz")
	cfg := testConfig("mem://src/logs/", "mem://dst/out/")
	cfg.SplitMaxObjects = 100
	out := dst.Sub("out")
	if _, err := runJob(ctx, t, cfg, NewSolo(), src, NewStoreSink(out, cfg.To, cfg.Job, "test"), false); err != nil {
		t.Fatal(err)
	}
	objs, _ := List(ctx, src, "logs/")
	sp := Pack(objs, cfg.SplitBytes, cfg.SplitMaxObjects)[0]
	whole := readAll(t, out, PartKey(sp.ID))

	gone := objs[2].Key
	b.hook[gone] = func() { _ = src.Delete(ctx, gone, nil) }
	_, err := runJob(ctx, t, cfg, NewSolo(), src, NewStoreSink(out, cfg.To, cfg.Job, "test"), false)
	if !errors.Is(err, ErrQuarantined) || !strings.Contains(err.Error(), gone+" ("+ReasonDeleted) {
		t.Fatalf("Run = %v, want %s quarantined as deleted", err, gone)
	}
	v, err := dataset.Validate(ctx, out, "out/", false)
	if err != nil || v.Certified || len(v.Manifest.Parts) != 1 {
		t.Fatalf("validate: %v %+v; want a failed run with one part", err, v)
	}
	key := PartKey(sp.without([]int{2}).PartID())
	if p := v.Manifest.Parts[0]; p.Key != key || p.Key == PartKey(sp.ID) {
		t.Fatalf("the part is %s, want %s (not the whole split's)", p.Key, key)
	}
	if !bytes.Equal(readAll(t, out, PartKey(sp.ID)), whole) {
		t.Fatalf("the whole split's part was rewritten")
	}
	dec, _ := zstd.NewReader(bytes.NewReader(readAll(t, out, key)))
	records, err := io.ReadAll(dec)
	dec.Close()
	if err != nil {
		t.Fatal(err)
	}
	for r := range c.records {
		if strings.Contains(r, gone) {
			delete(c.records, r)
		}
	}
	c.check(t, records, true)
}

func readAll(t *testing.T, s *store.Store, key string) []byte {
	t.Helper()
	obj, err := s.Get(context.Background(), key, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
