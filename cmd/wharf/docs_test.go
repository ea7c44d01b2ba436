package main

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the module root, two levels above this package.
const repoRoot = "../.."

var (
	codeInSource = regexp.MustCompile(`"(WHARF_[A-Z0-9_]+)"`)
	// A row of a code table in docs/errors.md: | `WHARF_X` | exit | …
	codeRow = regexp.MustCompile("(?m)^\\|\\s*`(WHARF_[A-Z0-9_]+)`\\s*\\|\\s*(\\d+)\\s*\\|")
	// An environment variable documented in docs/cli.md: | `WHARF_X` | …
	envRow = regexp.MustCompile("(?m)^\\|\\s*`(WHARF_[A-Z0-9_]+)`\\s*\\|")
)

// sourceCodes returns every "WHARF_…" string literal in the module's non-test Go files, with
// the first file that has it. Prefixes ("WHARF_ENDPOINT_") and the test harness's variables
// (WHARF_TEST_…) are not codes.
func sourceCodes(t *testing.T) map[string]string {
	t.Helper()
	found := map[string]string{}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range codeInSource.FindAllStringSubmatch(string(b), -1) {
			name := m[1]
			if strings.HasSuffix(name, "_") || strings.HasPrefix(name, "WHARF_TEST_") {
				continue
			}
			if _, ok := found[name]; !ok {
				found[name] = path
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestErrorsDocumented fails when a WHARF_… code in the Go source is missing from
// docs/errors.md (or, for an environment variable, from docs/cli.md), when errors.md documents
// a code no source defines, or when its exit code differs from what exit.go does.
func TestErrorsDocumented(t *testing.T) {
	documented := map[string]int{}
	for _, m := range codeRow.FindAllStringSubmatch(readDoc(t, "errors.md"), -1) {
		exit, _ := strconv.Atoi(m[2])
		if _, dup := documented[m[1]]; dup {
			t.Errorf("docs/errors.md documents %s twice", m[1])
		}
		documented[m[1]] = exit
	}
	envVars := map[string]bool{}
	for _, m := range envRow.FindAllStringSubmatch(readDoc(t, "cli.md"), -1) {
		envVars[m[1]] = true
	}
	src := sourceCodes(t)
	if len(src) < 20 || len(documented) < 20 {
		t.Fatalf("found %d codes in the source and %d in docs/errors.md: the scan is broken", len(src), len(documented))
	}
	for _, code := range slices.Sorted(maps.Keys(src)) {
		if _, ok := documented[code]; !ok && !envVars[code] {
			t.Errorf("%s (in %s) is not in docs/errors.md (or, if it is an environment variable, in docs/cli.md's table)", code, src[code])
		}
	}
	for _, code := range slices.Sorted(maps.Keys(documented)) {
		if _, ok := src[code]; !ok {
			t.Errorf("docs/errors.md documents %s, which no Go source defines", code)
		}
		if got := codeExit(code); got != documented[code] {
			t.Errorf("docs/errors.md says %s exits %d; exit.go exits %d", code, documented[code], got)
		}
	}
}
