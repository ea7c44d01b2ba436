package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// TestE2EExportMinIO exports the quickstart table to a MinIO bucket, validates it with the
// config and by URL, reads the parts back, and checks M6 and M8 there.
func TestE2EExportMinIO(t *testing.T) {
	srv := testenv.MinIO(t)
	c, ep := minioCLI(t)
	ctx := context.Background()
	ak, sk := srv.Refs(t)
	bucket := randomBucket(t)
	s, err := store.Open(ctx, "s3://"+bucket, srv.StoreConfig(t))
	must(t, err)
	defer s.Close()
	must(t, s.MakeBucket(ctx))

	cfg := quickstart(t, "    destination: ./out/{export}/{date}/", "    destination: s3://"+bucket+`/exports/{export}/{date}/
    store:
      endpoint: `+srv.Endpoint+`
      region: `+srv.Region+`
      access_key_id: `+ak+`
      secret_access_key: `+sk)
	r := wharf(t, "export", "-c", cfg, "--format", "json", "--parallel", "2").must(t, 0)
	run := decodeRun(t, r)
	if !strings.HasPrefix(run.Prefix, "s3://"+bucket+"/exports/orders/") || run.Validation == nil || !run.Validation.Certified {
		t.Fatalf("export to MinIO: %+v", run)
	}
	if strings.Contains(r.out+r.err, srv.SecretKey) {
		t.Error("the secret key appears in the output")
	}
	wharf(t, "validate", "-c", cfg, "--deep").must(t, 0)
	v := decodeValidation(t, c.run(t, append(ep, "validate", "--format", "json", run.Prefix)...).must(t, 0))
	if !v.Certified || v.ResolvedPrefix != run.Prefix || v.Rows != 1000 {
		t.Errorf("validate URL on MinIO: %+v", v)
	}
	if ids := minioIDs(t, s, strings.TrimPrefix(run.Prefix, "s3://"+bucket+"/"), run.Parts); !isRange(ids, 1, 1000) {
		t.Errorf("read back %d ids from MinIO, want exactly 1..1000", len(ids))
	}
	manifest, err := s.Get(ctx, strings.TrimPrefix(run.Prefix, "s3://"+bucket+"/")+dataset.ManifestKey, nil)
	must(t, err)
	body, _ := io.ReadAll(manifest)
	manifest.Close()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil || strings.Contains(string(body), srv.SecretKey) {
		t.Errorf("manifest on MinIO: %v (or it holds the secret)", err)
	}
	r = wharf(t, "export", "-c", cfg, "--resume").must(t, 5)
	if !strings.Contains(r.err, "WHARF_DEST_ALREADY_COMPLETE") {
		t.Errorf("resume on a complete prefix: %q", r.err)
	}
	r = c.run(t, append(ep, "validate", "s3://"+randomBucket(t)+"/exports/")...).must(t, 1)
	if !strings.Contains(r.err, "WHARF_VERIFY_MANIFEST_READ_ERROR") || strings.Contains(r.out, "legacy_run:      true") {
		t.Errorf("missing bucket: stdout %q stderr %q", r.out, r.err)
	}
}

// minioIDs downloads the parts under prefix and reads their id column, sorted.
func minioIDs(t *testing.T, s *store.Store, prefix string, parts []dataset.Part) []int64 {
	t.Helper()
	dir := t.TempDir()
	var ids []int64
	for _, p := range parts {
		obj, err := s.Get(context.Background(), prefix+p.Key, nil)
		must(t, err)
		path := filepath.Join(dir, p.Key)
		f, err := os.Create(path)
		must(t, err)
		_, err = io.Copy(f, obj)
		obj.Close()
		must(t, err)
		must(t, f.Close())
		ids = append(ids, readIDs(t, path)...)
	}
	slices.Sort(ids)
	return ids
}
