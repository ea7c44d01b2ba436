package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
)

// exportRun is one line of `wharf export --format json`.
type exportRun struct {
	RunID      string              `json:"run_id"`
	Prefix     string              `json:"resolved_prefix"`
	Status     string              `json:"status"`
	Rows       int64               `json:"rows"`
	Parts      []dataset.Part      `json:"parts"`
	Validation *dataset.Validation `json:"validation"`
	Table      *export.TableCommit `json:"table"`
}

// quickstart copies examples/quickstart.yaml into a temp dir, edited by the replacer's
// old/new pairs, and returns the config's path.
func quickstart(t *testing.T, oldnew ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples", "quickstart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "quickstart.yaml")
	body := strings.NewReplacer(oldnew...).Replace(string(b))
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func decodeRun(t *testing.T, r result) exportRun {
	t.Helper()
	var run exportRun
	if err := json.Unmarshal([]byte(r.out), &run); err != nil {
		t.Fatalf("export output %q: %v", r.out, err)
	}
	return run
}

func decodeValidation(t *testing.T, r result) dataset.Validation {
	t.Helper()
	var v dataset.Validation
	if err := json.Unmarshal([]byte(r.out), &v); err != nil {
		t.Fatalf("validate output %q (stderr %q): %v", r.out, r.err, err)
	}
	return v
}

// TestE2EExportQuickstart runs the README's first command from a copy of the example: it
// creates the demo source, exports, validates and says where the data is and how to query it.
func TestE2EExportQuickstart(t *testing.T) {
	cfg := quickstart(t)
	dir := filepath.Dir(cfg)
	r := cli{dir: dir}.run(t, "export", "-c", "quickstart.yaml").must(t, 0)
	for _, want := range []string{"created the demo source", "export orders: succeeded", "1000 in 4 part(s)",
		"certified (4 parts, 1000 rows", "out/orders/", "read_parquet(['out/orders/"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("quickstart output lacks %q:\n%s", want, r.out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "quickstart.db")); err != nil {
		t.Errorf("the demo source was not created beside the config: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".wharf", "state.db")); err != nil {
		t.Errorf("no state file beside the config: %v", err)
	}
	run := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json").must(t, 0))
	if run.Validation == nil || !run.Validation.Certified || run.Rows != 1000 || len(run.Parts) != 4 {
		t.Fatalf("second run: %+v", run)
	}
	if got := sortedIDs(t, run.Prefix, run.Parts); !isRange(got, 1, 1000) {
		t.Errorf("read back %d ids, want exactly 1..1000", len(got))
	}
	r = wharf(t, "validate", "-c", cfg).must(t, 0)
	if !strings.Contains(r.out, "resolved_prefix:") || !strings.Contains(r.out, "certified:       yes") {
		t.Errorf("validate -c:\n%s", r.out)
	}
	v := decodeValidation(t, wharf(t, "validate", "--format", "json", "--deep", run.Prefix).must(t, 0))
	if !v.Certified || v.LegacyRun || v.RunID != run.RunID || !v.Deep || v.ResolvedPrefix == "" {
		t.Errorf("validate URL: %+v", v)
	}
	r = wharf(t, "runs", "-c", cfg).must(t, 0)
	if n := strings.Count(r.out, "orders  succeeded  1000"); n != 2 {
		t.Errorf("runs lists %d succeeded runs, want 2:\n%s", n, r.out)
	}
}

func TestE2EExportUnknownKey(t *testing.T) {
	cfg := quickstart(t, "    chunk_rows: 250", "    chunk_rows: 250\n    chunk_size: 250")
	r := wharf(t, "export", "-c", cfg).must(t, 2)
	line := slices.IndexFunc(strings.Split(readFile(t, cfg), "\n"), func(l string) bool {
		return strings.HasPrefix(l, "    chunk_size:")
	}) + 1
	for _, want := range []string{`unknown key "chunk_size"`, fmt.Sprintf("quickstart.yaml:%d:", line), "exports[0]", "[WHARF_CONFIG_INVALID]"} {
		if !strings.Contains(r.err, want) {
			t.Errorf("stderr %q lacks %q", r.err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(cfg), "quickstart.db")); err == nil {
		t.Error("a config error still created the demo source")
	}
}

// TestE2EExportConfigErrorAttemptsNothing: an export refused with exit 2 (a chunk key that is
// not an integer or timestamp column) is not journaled as a run and writes nothing, not even
// a failed manifest on a prefix that has none; a zero chunk_rows is refused at load.
// TestE2EExportReadersReadExactlyTheDataset: after three runs to one prefix (every earlier
// run's parts stay beside the new ones), the query the export prints and the part list
// 'wharf parts' prints name exactly the manifest's parts; a prefix that is not certified
// lists nothing and exits 1.
func TestE2EExportReadersReadExactlyTheDataset(t *testing.T) {
	cfg := quickstart(t)
	dir := filepath.Dir(cfg)
	var r result
	for range 3 {
		r = cli{dir: dir}.run(t, "export", "-c", "quickstart.yaml").must(t, 0)
	}
	run := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json").must(t, 0))
	if n, _ := filepath.Glob(filepath.Join(run.Prefix, "part-*.parquet")); len(n) != 16 {
		t.Fatalf("%d parts at the prefix after four runs, want 16", len(n))
	}
	want := make([]string, len(run.Parts))
	for i, p := range run.Parts {
		want[i] = filepath.Join(run.Prefix, p.Key)
	}

	hint := regexp.MustCompile(`query it:\s+duckdb -c "SELECT count\(\*\) FROM read_parquet\(\[(.*)\]\)"`).FindStringSubmatch(r.out)
	if hint == nil {
		t.Fatalf("no query in\n%s", r.out)
	}
	var named []string
	for _, m := range regexp.MustCompile(`'([^']+)'`).FindAllStringSubmatch(hint[1], -1) {
		named = append(named, filepath.Join(dir, m[1]))
	}
	if len(named) != 4 || !isSubsetOfParts(t, named, dir) {
		t.Errorf("the printed query reads %v: want the third run's 4 parts", named)
	}

	got := strings.Fields(wharf(t, "parts", "-c", cfg).must(t, 0).out)
	if !slices.Equal(got, want) {
		t.Errorf("wharf parts prints %v, want %v", got, want)
	}
	var js struct {
		RunID string `json:"run_id"`
		Rows  int64  `json:"rows"`
		Parts []struct {
			URL  string `json:"url"`
			Rows int64  `json:"rows"`
		} `json:"parts"`
	}
	must(t, json.Unmarshal([]byte(wharf(t, "parts", "--format", "json", run.Prefix).must(t, 0).out), &js))
	if js.RunID != run.RunID || js.Rows != 1000 || len(js.Parts) != 4 || js.Parts[3].URL != want[3] || js.Parts[0].Rows != 250 {
		t.Errorf("wharf parts --format json: %+v", js)
	}

	must(t, os.Remove(want[1]))
	r = wharf(t, "parts", "-c", cfg).must(t, 1)
	if r.out != "" || !strings.Contains(r.err, "WHARF_NOT_CERTIFIED") {
		t.Errorf("an uncertified prefix: stdout %q, stderr %q", r.out, r.err)
	}
}

// isSubsetOfParts reports whether every path names a file of one run under dir.
func isSubsetOfParts(t *testing.T, paths []string, dir string) bool {
	t.Helper()
	runs := map[string]bool{}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil || !strings.HasPrefix(p, dir) {
			return false
		}
		b := filepath.Base(p)
		runs[b[:strings.LastIndexByte(b, '-')]] = true
	}
	return len(runs) == 1
}

func TestE2EExportConfigErrorAttemptsNothing(t *testing.T) {
	cfg := quickstart(t, "chunk_key: id ", "chunk_key: customer ")
	dir := filepath.Dir(cfg)
	r := wharf(t, "export", "-c", cfg).must(t, 2)
	if !strings.Contains(r.err, "WHARF_CHUNK_KEY_INVALID") || !strings.Contains(r.err, `"customer"`) {
		t.Errorf("stderr %q", r.err)
	}
	if runs := runRecords(t, cfg); len(runs) != 0 {
		t.Errorf("journaled %+v", runs)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("the failed run wrote %v", treeSnapshot(t, filepath.Join(dir, "out")))
	}
	r = wharf(t, "export", "-c", quickstart(t, "chunk_rows: 250", "chunk_rows: 0")).must(t, 2)
	if !strings.Contains(r.err, "chunk_rows: 0") || !strings.Contains(r.err, "WHARF_CONFIG_INVALID") {
		t.Errorf("chunk_rows: 0: %q", r.err)
	}
}

func TestE2EExportResumeComplete(t *testing.T) {
	cfg := quickstart(t)
	wharf(t, "export", "-c", cfg, "--resume").must(t, 0) // nothing to resume yet: a plain run
	r := wharf(t, "export", "-c", cfg, "--resume").must(t, 5)
	if !strings.Contains(r.err, "[WHARF_DEST_ALREADY_COMPLETE]") {
		t.Errorf("stderr %q", r.err)
	}
	wharf(t, "export", "-c", cfg, "--resume", "--force").must(t, 0)
	r = wharf(t, "export", "-c", cfg, "--force").must(t, 2)
	if !strings.Contains(r.err, "--force goes with --resume") {
		t.Errorf("stderr %q", r.err)
	}
}

// TestE2EValidateTampered tampers with an exported prefix in each way a reader must notice,
// and checks validate exits 1 naming the problem and the key.
func TestE2EValidateTampered(t *testing.T) {
	for _, tc := range []struct {
		name, problem string
		key           func(run exportRun) string
		tamper        func(t *testing.T, path string)
		deep          bool
	}{
		{"part deleted", dataset.ProblemPartMissing, firstPart, func(t *testing.T, p string) { must(t, os.Remove(p)) }, false},
		{"part truncated", dataset.ProblemPartSize, firstPart, func(t *testing.T, p string) { must(t, os.Truncate(p, 100)) }, false},
		{"part rewritten, same size", dataset.ProblemPartETag, firstPart, flipByte, false},
		{"manifest edited", dataset.ProblemSuccessMismatch, func(exportRun) string { return dataset.SuccessKey },
			func(t *testing.T, p string) {
				m := filepath.Join(filepath.Dir(p), dataset.ManifestKey)
				b, err := os.ReadFile(m)
				must(t, err)
				must(t, os.WriteFile(m, []byte(strings.Replace(string(b), `"rows": 1000`, `"rows": 1001`, 1)), 0o644))
			}, false},
		{"_SUCCESS edited", dataset.ProblemSuccessMismatch, func(exportRun) string { return dataset.SuccessKey },
			func(t *testing.T, p string) { must(t, os.WriteFile(p, []byte("0000"), 0o644)) }, false},
		{"_SUCCESS deleted", dataset.ProblemSuccessMissing, func(exportRun) string { return dataset.SuccessKey },
			func(t *testing.T, p string) { must(t, os.Remove(p)) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quickstart(t)
			run := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json").must(t, 0))
			key := tc.key(run)
			tc.tamper(t, filepath.Join(run.Prefix, key))
			argv := []string{"validate", "--format", "json", run.Prefix}
			if tc.deep {
				argv = append(argv, "--deep")
			}
			r := wharf(t, argv...).must(t, 1)
			v := decodeValidation(t, r)
			if v.Certified || len(v.Problems) == 0 || v.Problems[0].Code != tc.problem || v.Problems[0].Key != key {
				t.Errorf("validation %+v; want problem %s on %s", v, tc.problem, key)
			}
			if !strings.Contains(r.err, "WHARF_NOT_CERTIFIED") || !strings.Contains(r.err, key) {
				t.Errorf("stderr %q does not name the code and %s", r.err, key)
			}
			pretty := wharf(t, "validate", "-c", cfg, "--prefix", run.Prefix).must(t, 1)
			if !strings.Contains(pretty.out, tc.problem) || !strings.Contains(pretty.out, "certified:       no") {
				t.Errorf("pretty validate:\n%s", pretty.out)
			}
		})
	}
}

func TestE2EValidateLegacySpark(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"_SUCCESS": "", "part-00000-abc.snappy.parquet": "PAR1…"})
	r := wharf(t, "validate", "--format", "json", dir).must(t, 0) // M6: success without certifying
	v := decodeValidation(t, r)
	if !v.LegacyRun || v.Certified || v.ResolvedPrefix != dir+"/" {
		t.Errorf("Spark-style prefix: %+v", v)
	}
	r = wharf(t, "validate", dir).must(t, 0)
	if !strings.Contains(r.out, "legacy_run:       true") && !strings.Contains(r.out, "legacy_run:      true") {
		t.Errorf("pretty:\n%s", r.out)
	}
	r = wharf(t, "validate", "--prefix", dir, dir).must(t, 2)
	if !strings.Contains(r.err, "--prefix goes with a config file") {
		t.Errorf("stderr %q", r.err)
	}
}

func firstPart(run exportRun) string { return run.Parts[0].Key }

func flipByte(t *testing.T, p string) {
	b, err := os.ReadFile(p)
	must(t, err)
	b[len(b)/2] ^= 0xff
	must(t, os.WriteFile(p, b, 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// sortedIDs reads the id column of the parts under the local prefix, sorted.
func sortedIDs(t *testing.T, prefix string, parts []dataset.Part) []int64 {
	t.Helper()
	var ids []int64
	for _, p := range parts {
		ids = append(ids, readIDs(t, filepath.Join(prefix, p.Key))...)
	}
	slices.Sort(ids)
	return ids
}

func readIDs(t *testing.T, path string) []int64 {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	must(t, err)
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	must(t, err)
	tbl, err := fr.ReadTable(context.Background())
	must(t, err)
	defer tbl.Release()
	idx := tbl.Schema().FieldIndices("id")
	if len(idx) != 1 {
		t.Fatalf("%s has no id column: %s", path, tbl.Schema())
	}
	var ids []int64
	for _, c := range tbl.Column(idx[0]).Data().Chunks() {
		ids = append(ids, c.(*array.Int64).Int64Values()...)
	}
	return ids
}

// isRange reports whether ids are exactly lo..hi, each once.
func isRange(ids []int64, lo, hi int64) bool {
	if int64(len(ids)) != hi-lo+1 {
		return false
	}
	for i, id := range ids {
		if id != lo+int64(i) {
			return false
		}
	}
	return true
}
