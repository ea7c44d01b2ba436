package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// The export of TestE2EExportAbortsStaleUploadsMinIO: two chunks of about 9 MiB of NDJSON,
// each uploaded in 5 MiB parts.
const (
	bigRows      = 18000
	bigChunkRows = 9000
)

// bigSource creates a SQLite table of bigRows rows of 1,000 hex characters each.
func bigSource(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "big.db")
	db, err := sql.Open("sqlite", "file:"+src)
	must(t, err)
	defer db.Close()
	for _, q := range []string{"CREATE TABLE big (id INTEGER PRIMARY KEY, pad TEXT)",
		fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
  INSERT INTO big SELECT i, hex(randomblob(500)) FROM n`, bigRows)} {
		_, err := db.Exec(q)
		must(t, err)
	}
	return src
}

// bucketUploads lists the incomplete uploads in the bucket below prefix (MinIO lists them all
// for an empty prefix, and none for a prefix that is not a whole key; the bucket is this
// test's own).
func bucketUploads(t *testing.T, s *store.Store, prefix string) []store.Upload {
	t.Helper()
	ups, err := s.ListUploads(context.Background(), "")
	must(t, err)
	return slices.DeleteFunc(ups, func(u store.Upload) bool { return !strings.HasPrefix(u.Key, prefix) })
}

// startMidPart starts the export of cfg with each part's body read slowly, and returns once
// one of its multipart uploads is open in the bucket below prefix.
func startMidPart(t *testing.T, c cli, cfg string, s *store.Store, prefix string) *exec.Cmd {
	t.Helper()
	c.env = append(slices.Clone(c.env), envTestPause+"=part-body:250ms")
	cmd := c.command("export", "-c", cfg)
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	deadline := time.Now().Add(30 * time.Second)
	for len(bucketUploads(t, s, prefix)) == 0 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("no multipart upload was opened within 30 s\nstderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cmd
}

// TestE2EExportAbortsStaleUploadsMinIO: an export killed in the middle of a multipart upload
// leaves it open (and billed); --resume aborts it before it rewrites the chunk, and leaves
// none under the prefix. An export stopped by SIGTERM aborts its own.
func TestE2EExportAbortsStaleUploadsMinIO(t *testing.T) {
	if testing.Short() {
		t.Skip("exports 18 MiB to MinIO, slowly")
	}
	srv := testenv.MinIO(t)
	ctx := context.Background()
	ak, sk := srv.Refs(t)
	bucket := randomBucket(t)
	s, err := store.Open(ctx, "s3://"+bucket, srv.StoreConfig(t))
	must(t, err)
	defer s.Close()
	must(t, s.MakeBucket(ctx))
	srv.RemoveBucketOnCleanup(t, bucket)
	c, ep := minioCLI(t)
	src := bigSource(t)
	config := func(t *testing.T, prefix string) string {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"wharf.yaml": fmt.Sprintf(`exports:
  - name: big
    source: sqlite://%s
    table: big
    chunk_key: id
    chunk_rows: %d
    format: ndjson
    destination: s3://%s/%s
    store:
      endpoint: %s
      region: %s
      access_key_id: %s
      secret_access_key: %s
      part_size: 5MiB
`, src, bigChunkRows, bucket, prefix, srv.Endpoint, srv.Region, ak, sk)})
		return filepath.Join(dir, "wharf.yaml")
	}
	uploadsLs := func(t *testing.T, url string) string {
		return c.run(t, append(slices.Clone(ep), "uploads", "ls", "--format", "json", url)...).must(t, 0).out
	}

	t.Run("killed, then resumed", func(t *testing.T) {
		prefix := "killed/"
		cfg := config(t, prefix)
		cmd := startMidPart(t, c, cfg, s, prefix)
		_ = cmd.Process.Kill() // SIGKILL: the upload cannot be aborted by the process
		_ = cmd.Wait()
		stale := bucketUploads(t, s, prefix)
		if len(stale) == 0 || !strings.HasPrefix(stale[0].Key, prefix+"part-") {
			t.Fatalf("the kill left no upload open under %s: %+v", prefix, stale)
		}
		if out := uploadsLs(t, "s3://"+bucket+"/"+stale[0].Key); !strings.Contains(out, stale[0].ID) {
			t.Fatalf("wharf uploads ls does not show the stale upload:\n%s", out)
		}

		var res export.Result
		must(t, json.Unmarshal([]byte(wharf(t, "export", "-c", cfg, "--resume", "--format", "json").must(t, 0).out), &res))
		if !res.Resumed || !slices.Contains(res.Aborted, strings.TrimPrefix(stale[0].Key, prefix)) {
			t.Errorf("resume: resumed %v, aborted %v; want the stale upload at %s aborted", res.Resumed, res.Aborted, stale[0].Key)
		}
		if left := bucketUploads(t, s, prefix); len(left) != 0 {
			t.Errorf("after --resume, incomplete uploads are left: %+v", left)
		}
		for _, u := range stale {
			if out := uploadsLs(t, "s3://"+bucket+"/"+u.Key); out != "" {
				t.Errorf("wharf uploads ls %s after --resume:\n%s", u.Key, out)
			}
		}
		if out := uploadsLs(t, "s3://"+bucket+"/"); out != "" {
			t.Errorf("wharf uploads ls of the bucket after --resume:\n%s", out)
		}
		c.run(t, append(slices.Clone(ep), "validate", "--deep", "s3://"+bucket+"/"+prefix)...).must(t, 0)
	})

	t.Run("stopped by SIGTERM", func(t *testing.T) {
		prefix := "stopped/"
		cfg := config(t, prefix)
		cmd := startMidPart(t, c, cfg, s, prefix)
		must(t, cmd.Process.Signal(syscall.SIGTERM))
		_ = cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			t.Errorf("SIGTERM: exit %d, want 130", code)
		}
		if left := bucketUploads(t, s, prefix); len(left) != 0 {
			t.Errorf("the stopped run left incomplete uploads: %+v", left)
		}
		wharf(t, "export", "-c", cfg, "--resume").must(t, 0)
	})
}
