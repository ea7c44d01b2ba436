package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// TestE2EExportCrashMinIO kills `wharf export` writing to MinIO with SIGKILL at random
// points, 8 seeds, each on its own prefix, then checks that --resume completes, validate
// --deep of the URL certifies, the parts hold exactly the source's rows, each once, and no
// object outside the manifest's parts, manifest, _SUCCESS and _quarantine/ is left under the
// prefix.
func TestE2EExportCrashMinIO(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test takes ~15 s")
	}
	srv := testenv.MinIO(t)
	ctx := context.Background()
	ak, sk := srv.Refs(t)
	bucket := randomBucket(t)
	s, err := store.Open(ctx, "s3://"+bucket, srv.StoreConfig(t))
	must(t, err)
	defer s.Close()
	must(t, s.MakeBucket(ctx))
	c, ep := minioCLI(t)
	src := t.TempDir() + "/demo.db"
	must(t, export.CreateDemo(ctx, src, crashRows))

	states := map[string]int{}
	for seed := range 8 {
		t.Run(fmt.Sprintf("seed%02d", seed), func(t *testing.T) {
			prefix := fmt.Sprintf("crash/seed%02d/", seed)
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"wharf.yaml": fmt.Sprintf(`exports:
  - name: orders
    source: sqlite://%s
    table: orders
    chunk_key: id
    chunk_rows: %d
    destination: s3://%s/%s
    store:
      endpoint: %s
      region: %s
      access_key_id: %s
      secret_access_key: %s
`, src, crashRows/crashParts, bucket, prefix, srv.Endpoint, srv.Region, ak, sk)})
			cfg := dir + "/wharf.yaml"
			rng := rand.New(rand.NewPCG(uint64(seed), 0xc0ffee))

			cmd := cli{env: []string{envTestPause + "=" + crashPauses}}.command("export", "-c", cfg)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			must(t, cmd.Start())
			time.Sleep(time.Duration(50+rng.IntN(650)) * time.Millisecond)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			state := objectState(t, s, prefix)
			states[state]++

			r := wharf(t, "export", "-c", cfg, "--resume")
			if r.code != 0 && !(r.code == 5 && state == "_SUCCESS") {
				t.Fatalf("killed at %s: resume exit %d\nstdout %s\nstderr %s", state, r.code, r.out, r.err)
			}
			c.run(t, append(ep, "validate", "--deep", "s3://"+bucket+"/"+prefix)...).must(t, 0)
			m := readManifest(t, s, prefix)
			if ids := minioIDs(t, s, prefix, m.Parts); !isRange(ids, 1, crashRows) {
				t.Fatalf("killed at %s: the dataset holds %d ids, want exactly 1..%d", state, len(ids), crashRows)
			}
			want := []string{dataset.ManifestKey, dataset.SuccessKey}
			for _, p := range m.Parts {
				want = append(want, p.Key)
			}
			slices.Sort(want)
			// A part the killed run wrote but did not journal is moved aside (M9), never
			// deleted and never listed.
			got := slices.DeleteFunc(keysBelow(t, s, prefix), func(k string) bool {
				return strings.HasPrefix(k, "_quarantine/")
			})
			if !slices.Equal(got, want) {
				t.Errorf("killed at %s: objects %v, want %v", state, got, want)
			}
		})
	}
	t.Logf("killed at: %v", states)
	if len(states) < 2 {
		t.Errorf("every kill landed in the same state %v: the seeds aim nowhere", states)
	}
}

func readManifest(t *testing.T, s *store.Store, prefix string) *dataset.Manifest {
	t.Helper()
	obj, err := s.Get(context.Background(), prefix+dataset.ManifestKey, nil)
	must(t, err)
	b, err := io.ReadAll(obj)
	obj.Close()
	must(t, err)
	m, err := dataset.DecodeManifest(b)
	must(t, err)
	return m
}

// keysBelow lists every key below prefix, relative to it, sorted.
func keysBelow(t *testing.T, s *store.Store, prefix string) []string {
	t.Helper()
	var keys []string
	for o, err := range s.Walk(context.Background(), prefix) {
		must(t, err)
		keys = append(keys, strings.TrimPrefix(o.Key, prefix))
	}
	slices.Sort(keys)
	return keys
}

// objectState describes what a killed export left under prefix in a store.
func objectState(t *testing.T, s *store.Store, prefix string) string {
	t.Helper()
	parts := 0
	var manifest, success bool
	for _, k := range keysBelow(t, s, prefix) {
		switch {
		case k == dataset.SuccessKey:
			success = true
		case k == dataset.ManifestKey:
			manifest = true
		case strings.HasPrefix(path.Base(k), "part-"):
			parts++
		}
	}
	switch {
	case success:
		return "_SUCCESS"
	case manifest:
		return "manifest, no _SUCCESS"
	case parts == 0:
		return "nothing written"
	}
	return fmt.Sprintf("%d of %d parts", parts, crashParts)
}
