package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/dataset"
)

// TestE2EValidateLegacyExitsZero: a legacy prefix (Spark's empty _SUCCESS, no manifest) is
// reported legacy_run: true, not certified, and exits 0 as the contract says (M6); --strict
// exits 1. A prefix holding nothing, or only a killed wharf run's parts, is no legacy run.
func TestE2EValidateLegacyExitsZero(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"_SUCCESS": "", "part-00000-abc.snappy.parquet": "PAR1…"})
	v := decodeValidation(t, wharf(t, "validate", "--format", "json", dir).must(t, 0))
	if !v.LegacyRun || v.Certified || v.ResolvedPrefix != dir+"/" || len(v.Problems) != 1 || v.Problems[0].Code != dataset.ProblemNoManifest {
		t.Errorf("legacy prefix: %+v", v)
	}
	r := wharf(t, "validate", dir).must(t, 0)
	if !strings.Contains(r.out, "legacy_run:      true") || !strings.Contains(r.out, "certified:       no") ||
		!strings.Contains(r.out, "a legacy run: no manifest.json, so nothing is certified") {
		t.Errorf("pretty:\n%s", r.out)
	}
	r = wharf(t, "validate", "--strict", dir).must(t, 1)
	if !strings.Contains(r.err, "WHARF_NOT_CERTIFIED") || !strings.Contains(r.err, dataset.ProblemNoManifest) {
		t.Errorf("--strict: stderr %q", r.err)
	}
	// wharf parts still prints nothing and fails: there is no dataset to read.
	wharf(t, "parts", dir).must(t, 1)

	empty := t.TempDir()
	v = decodeValidation(t, wharf(t, "validate", "--format", "json", empty).must(t, 1))
	if v.LegacyRun || v.Certified || len(v.Problems) != 1 || v.Problems[0].Code != dataset.ProblemPrefixEmpty {
		t.Errorf("empty prefix: %+v", v)
	}
	killed := t.TempDir()
	writeFiles(t, killed, map[string]string{"part-20261201T101500Z-1a2b3c-00000.parquet": "PAR1…"})
	v = decodeValidation(t, wharf(t, "validate", "--format", "json", killed).must(t, 1))
	if v.LegacyRun || len(v.Problems) != 1 || v.Problems[0].Code != dataset.ProblemRunUnfinished ||
		!strings.Contains(v.Problems[0].Message, "20261201T101500Z-1a2b3c") {
		t.Errorf("a killed run's parts: %+v", v)
	}
}

// TestE2EExportStdoutRefused: destination - (or stdout://) keeps nothing, so an export there
// is refused at config load, naming the key, before the source is read or created.
func TestE2EExportStdoutRefused(t *testing.T) {
	for _, dest := range []string{`"-"`, "stdout://"} {
		cfg := quickstart(t, "destination: ./out/{export}/{date}/", "destination: "+dest)
		r := wharf(t, "export", "-c", cfg).must(t, 2)
		if !strings.Contains(r.err, "orders.destination") || !strings.Contains(r.err, "standard output") ||
			!strings.Contains(r.err, "WHARF_EXPORT_CONFIG_INVALID") || r.out != "" {
			t.Errorf("destination %s: stdout %q stderr %q", dest, r.out, r.err)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(cfg), "quickstart.db")); !os.IsNotExist(err) {
			t.Errorf("destination %s: the demo source was created before the refusal", dest)
		}
	}
}

// TestE2EExportQueryEndingInComment: a query: whose last line is a -- comment exports, and
// so does one whose statement is closed by a semicolon and followed by comments (as a query
// pasted from a SQL file is), while a -- or ; inside a string stays in the query.
func TestE2EExportQueryEndingInComment(t *testing.T) {
	for _, q := range []string{
		"SELECT * FROM orders\n      WHERE id > 0 -- every order\n",
		"SELECT * FROM orders\n      WHERE id > 0; -- every order\n      /* nightly */\n",
		"SELECT * FROM orders WHERE note IS NULL OR note <> 'x;--y';\n",
	} {
		cfg := quickstart(t, "    table: orders\n", "    query: |\n      "+q)
		run := decodeRun(t, wharf(t, "export", "-c", cfg, "--format", "json").must(t, 0))
		if run.Rows != 1000 || run.Validation == nil || !run.Validation.Certified {
			t.Errorf("export of the query %q: rows %d, validation %+v", q, run.Rows, run.Validation)
		}
	}
}

// TestE2EExportInfinityTildeRefused: infinity: ~ (YAML's null, not the word) is refused at
// config load, naming the key and its line, rather than read as the default refuse.
func TestE2EExportInfinityTildeRefused(t *testing.T) {
	for _, v := range []string{"~", ""} {
		cfg := quickstart(t, "    table: orders\n", "    table: orders\n    infinity: "+v+"\n")
		r := wharf(t, "export", "-c", cfg).must(t, 2)
		if !strings.Contains(r.err, "exports[0].infinity") || !strings.Contains(r.err, ":18:") || !strings.Contains(r.err, "WHARF_CONFIG_INVALID") {
			t.Errorf("infinity: %q: stderr %q", v, r.err)
		}
	}
}
