package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
)

const (
	crashRows  = 1000
	crashParts = 5
	// The export sleeps at these points (WHARF_TEST_EXPORT_PAUSE, a test-only hook) so that a
	// kill can be aimed at them.
	crashPauses = "part-upload:40ms,after-part:20ms,after-manifest:150ms"
)

// crashPhase aims a SIGKILL: it waits for a state of the prefix, then a random delay.
type crashPhase struct {
	name string
	aim  func(rng *rand.Rand, prefix string) bool // false: the state never came
}

var crashPhases = []crashPhase{
	{"during a part upload", func(rng *rand.Rand, prefix string) bool {
		ok := waitParts(prefix, 1+rng.IntN(crashParts-1))
		time.Sleep(time.Duration(22+rng.IntN(25)) * time.Millisecond) // after-part, into part-upload
		return ok
	}},
	{"between parts", func(rng *rand.Rand, prefix string) bool {
		ok := waitParts(prefix, 1+rng.IntN(crashParts-1))
		time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
		return ok
	}},
	{"between manifest and _SUCCESS", func(rng *rand.Rand, prefix string) bool {
		ok := waitFile(filepath.Join(prefix, dataset.ManifestKey))
		time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
		return ok
	}},
	{"at a random time", func(rng *rand.Rand, _ string) bool {
		time.Sleep(time.Duration(rng.IntN(700)) * time.Millisecond)
		return true
	}},
}

// TestE2EExportCrash kills `wharf export` with SIGKILL at aimed and random points, 30 seeds,
// then checks that --resume completes, validate --deep certifies, and the parts hold exactly
// the source's rows, each once.
func TestE2EExportCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test takes ~20 s")
	}
	src := filepath.Join(t.TempDir(), "demo.db")
	must(t, export.CreateDemo(context.Background(), src, crashRows))
	seen := map[string]int{}
	for seed := range 30 {
		phase := crashPhases[seed%len(crashPhases)]
		t.Run(fmt.Sprintf("seed%02d", seed), func(t *testing.T) {
			state := crashOnce(t, src, uint64(seed), phase)
			seen[phase.name+": "+state]++
		})
	}
	for k, n := range seen {
		t.Logf("%2d kill(s) %s", n, k)
	}
	if seen["between manifest and _SUCCESS: manifest, no _SUCCESS"] == 0 {
		t.Error("no kill landed between manifest.json and _SUCCESS")
	}
	if seen["during a part upload: some parts, no manifest, a part upload in flight"] == 0 {
		t.Error("no kill landed during a part upload")
	}
}

func crashOnce(t *testing.T, src string, seed uint64, phase crashPhase) string {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wharf.yaml")
	writeFiles(t, dir, map[string]string{"wharf.yaml": fmt.Sprintf(`exports:
  - name: orders
    source: sqlite://%s
    table: orders
    chunk_key: id
    chunk_rows: %d
    destination: ./out/
`, src, crashRows/crashParts)})
	prefix := filepath.Join(dir, "out")
	rng := rand.New(rand.NewPCG(seed, 0x5eed))

	cmd := cli{env: []string{envTestPause + "=" + crashPauses}}.command("export", "-c", cfg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	aimed := phase.aim(rng, prefix)
	_ = cmd.Process.Kill() // SIGKILL: no deferred code, no cleanup
	_ = cmd.Wait()
	state := prefixState(prefix)
	if !aimed {
		t.Logf("the aimed state never came (stderr %q)", stderr.String())
	}

	r := wharf(t, "export", "-c", cfg, "--resume")
	switch {
	case r.code == 5 && strings.HasSuffix(state, "_SUCCESS"):
		// the killed run had finished: nothing to resume
	case r.code != 0:
		t.Fatalf("killed %s (%s): resume exit %d\nstdout %s\nstderr %s", phase.name, state, r.code, r.out, r.err)
	}
	wharf(t, "validate", "--deep", prefix).must(t, 0)
	m, err := dataset.DecodeManifest([]byte(readFile(t, filepath.Join(prefix, dataset.ManifestKey))))
	must(t, err)
	if ids := sortedIDs(t, prefix, m.Parts); !isRange(ids, 1, crashRows) {
		t.Fatalf("killed %s (%s): the dataset holds %d ids, want exactly 1..%d", phase.name, state, len(ids), crashRows)
	}
	var keys []string
	for _, p := range m.Parts {
		keys = append(keys, p.Key)
	}
	if files := partFiles(prefix); !slices.Equal(files, keys) {
		t.Errorf("part files %v, manifest lists %v", files, keys)
	}
	return state
}

// prefixState describes what a killed export left: parts, manifest, _SUCCESS.
func prefixState(prefix string) string {
	n := len(partFiles(prefix))
	_, errM := os.Stat(filepath.Join(prefix, dataset.ManifestKey))
	_, errS := os.Stat(filepath.Join(prefix, dataset.SuccessKey))
	switch {
	case errS == nil:
		return "_SUCCESS"
	case errM == nil:
		return "manifest, no _SUCCESS"
	case n == crashParts:
		return "all parts, no manifest"
	}
	// The file store stages an upload in its hidden tmp directory, then renames it into place.
	if tmp, _ := filepath.Glob(filepath.Join(prefix, ".wharf-meta", "tmp", "*")); len(tmp) > 0 {
		return "some parts, no manifest, a part upload in flight"
	}
	return "some parts, no manifest"
}

func partFiles(prefix string) []string {
	names, _ := filepath.Glob(filepath.Join(prefix, "part-*"))
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	slices.Sort(names)
	return names
}

func waitParts(prefix string, n int) bool {
	return waitUntil(func() bool { return len(partFiles(prefix)) >= n })
}

func waitFile(path string) bool {
	return waitUntil(func() bool { _, err := os.Stat(path); return err == nil })
}

func waitUntil(ok func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return false
}
