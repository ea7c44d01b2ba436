package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
)

// corruptInPlace flips a byte in the middle of the file at p without replacing it (same
// inode, same size) and puts its modification time back, as a disk fault or a careless edit
// followed by a restore of times would leave it. It returns the corrupted bytes.
func corruptInPlace(t *testing.T, p string) []byte {
	t.Helper()
	fi, err := os.Stat(p)
	must(t, err)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	must(t, err)
	b := make([]byte, 1)
	off := fi.Size() / 2
	_, err = f.ReadAt(b, off)
	must(t, err)
	b[0] ^= 0xff
	_, err = f.WriteAt(b, off)
	must(t, err)
	must(t, f.Close())
	must(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
	after, err := os.Stat(p)
	must(t, err)
	if !after.ModTime().Equal(fi.ModTime()) || after.Size() != fi.Size() {
		t.Fatalf("the corruption changed the file's time or size: %v %d, was %v %d", after.ModTime(), after.Size(), fi.ModTime(), fi.Size())
	}
	b, err = os.ReadFile(p)
	must(t, err)
	return b
}

// etagOf is the ETag `wharf stat` reports for a local file.
func etagOf(t *testing.T, p string) string {
	t.Helper()
	var info struct {
		ETag string `json:"etag"`
	}
	must(t, json.Unmarshal([]byte(wharf(t, "stat", "--format", "json", p).must(t, 0).out), &info))
	return info.ETag
}

// TestE2EValidateFolderCorruptInPlace: a part corrupted in place with its modification time
// put back keeps its size and its ETag in the folder store; plain validate still fails,
// naming the part, because a local directory's parts are re-hashed.
func TestE2EValidateFolderCorruptInPlace(t *testing.T) {
	cfg := quickstart(t)
	run := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json").must(t, 0))
	part := run.Parts[1]
	p := filepath.Join(run.Prefix, part.Key)
	corruptInPlace(t, p)
	if got := etagOf(t, p); got != part.ETag {
		t.Fatalf("the corrupted part's ETag is %q, the manifest's %q: the test does not hide the change", got, part.ETag)
	}
	r := wharf(t, "validate", "--format", "json", run.Prefix).must(t, 1)
	v := decodeValidation(t, r)
	if v.Certified || !v.Hashed || len(v.Problems) != 1 || v.Problems[0].Code != dataset.ProblemPartHash || v.Problems[0].Key != part.Key {
		t.Errorf("validate: %+v; want %s on %s", v, dataset.ProblemPartHash, part.Key)
	}
	if !strings.Contains(r.err, "WHARF_NOT_CERTIFIED") || !strings.Contains(r.err, part.Key) {
		t.Errorf("stderr %q does not name the code and the part", r.err)
	}
	pretty := wharf(t, "validate", run.Prefix).must(t, 1)
	if !strings.Contains(pretty.out, "sha256") || !strings.Contains(pretty.out, part.Key) {
		t.Errorf("pretty validate:\n%s", pretty.out)
	}
}

// TestE2EExportResumeFolderCorruptInPlace: a run killed after some parts, one of them then
// corrupted in place with its time put back; --resume must not keep it: it is quarantined
// verbatim and rewritten, and the dataset validates --deep.
func TestE2EExportResumeFolderCorruptInPlace(t *testing.T) {
	src := filepath.Join(t.TempDir(), "demo.db")
	must(t, export.CreateDemo(t.Context(), src, crashRows))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wharf.yaml")
	writeFiles(t, dir, map[string]string{"wharf.yaml": `exports:
  - name: orders
    source: sqlite://` + src + `
    table: orders
    chunk_key: id
    chunk_rows: 200
    destination: ./out/
`})
	prefix := filepath.Join(dir, "out")
	cmd := cli{env: []string{envTestPause + "=after-part:300ms"}}.command("export", "-c", cfg)
	must(t, cmd.Start())
	ok := waitParts(prefix, 3) // parts 0 and 1 are journaled once part 2 is in place
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !ok || prefixState(prefix) == "_SUCCESS" {
		t.Fatalf("the kill did not land between parts: %s", prefixState(prefix))
	}
	first := partFiles(prefix)[0]
	etag := etagOf(t, filepath.Join(prefix, first))
	corrupted := corruptInPlace(t, filepath.Join(prefix, first))
	if etagOf(t, filepath.Join(prefix, first)) != etag {
		t.Fatal("the corruption changed the part's ETag: the test does not hide the change")
	}

	var res export.Result
	must(t, json.Unmarshal([]byte(wharf(t, "export", "-c", cfg, "--resume", "--format", "json").must(t, 0).out), &res))
	quarantined := dataset.QuarantineDir + res.RunID + "/" + first
	if !res.Resumed || !slices.Contains(res.Quarantined, quarantined) || slices.Contains(res.Skipped, first) {
		t.Fatalf("resume kept the corrupted part: resumed %v, skipped %v, quarantined %v", res.Resumed, res.Skipped, res.Quarantined)
	}
	if got := readFile(t, filepath.Join(prefix, filepath.FromSlash(quarantined))); got != string(corrupted) {
		t.Error("the quarantined copy is not the corrupted part verbatim")
	}
	wharf(t, "validate", "--deep", prefix).must(t, 0)
	m, err := dataset.DecodeManifest([]byte(readFile(t, filepath.Join(prefix, dataset.ManifestKey))))
	must(t, err)
	if ids := sortedIDs(t, prefix, m.Parts); !isRange(ids, 1, crashRows) {
		t.Errorf("the dataset holds %d ids, want exactly 1..%d", len(ids), crashRows)
	}
}
