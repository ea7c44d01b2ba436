package main

import (
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/errcode"
)

// repoRoot is the module root, two levels above this package.
const repoRoot = "../.."

var updateDocs = flag.Bool("update", false, "rewrite the code tables of docs/errors.md from the registry")

var (
	codeInSource = regexp.MustCompile(`"(WHARF_[A-Z0-9_]+)"`)
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

// docSection is one "## " section of docs/errors.md: its heading, the prose before its code
// table, and the table's lines.
type docSection struct {
	heading string
	prose   []string
	table   []string
}

const tableHead = "| Code | Exit | Meaning | What to do |\n|---|---|---|---|"

func parseErrorsDoc(doc string) (intro []string, sections []*docSection) {
	var cur *docSection
	for _, line := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			cur = &docSection{heading: strings.TrimPrefix(line, "## ")}
			sections = append(sections, cur)
		case cur == nil:
			intro = append(intro, line)
		case strings.HasPrefix(line, "| Code |") || len(cur.table) > 0 && strings.HasPrefix(line, "|"):
			cur.table = append(cur.table, line)
		case len(cur.table) > 0 && strings.TrimSpace(line) == "":
		default:
			cur.prose = append(cur.prose, line)
		}
	}
	return intro, sections
}

// row is a code's line of its section's table in docs/errors.md.
func row(c *errcode.Code) string {
	d := c.Doc()
	return fmt.Sprintf("| `%s` | %d | %s | %s |", d.Name, d.Exit, d.Meaning, d.Remedy)
}

// expectedTables returns, by section, the table the registry says each section has.
func expectedTables() (map[string][]string, []string) {
	tables := map[string][]string{}
	var order []string
	for _, c := range errcode.All() {
		s := c.Doc().Section
		if strings.HasPrefix(c.Name(), "WHARF_TEST_") {
			continue
		}
		if _, ok := tables[s]; !ok {
			order = append(order, s)
			tables[s] = strings.Split(tableHead, "\n")
		}
		tables[s] = append(tables[s], row(c))
	}
	return tables, order
}

// TestErrorsDocumented holds docs/errors.md to the code registry: every registered code has
// its row (exit status, meaning, what to do) under its section, and no row names a code the
// program does not define; every WHARF_… literal in the source is a registered code or an
// environment variable in docs/cli.md's table. With -update it rewrites the tables instead.
func TestErrorsDocumented(t *testing.T) {
	doc := readDoc(t, "errors.md")
	intro, sections := parseErrorsDoc(doc)
	want, order := expectedTables()
	if len(want) < 5 || len(errcode.All()) < 20 {
		t.Fatalf("%d codes in %d sections registered: the registry is not linked in", len(errcode.All()), len(want))
	}
	bySection := map[string]*docSection{}
	for _, s := range sections {
		bySection[s.heading] = s
	}
	for _, name := range order {
		if bySection[name] == nil {
			s := &docSection{heading: name}
			sections = append(sections, s)
			bySection[name] = s
		}
	}
	if *updateDocs {
		var b strings.Builder
		b.WriteString(strings.Join(intro, "\n") + "\n")
		for _, s := range sections {
			fmt.Fprintf(&b, "## %s\n", s.heading)
			if prose := strings.Trim(strings.Join(s.prose, "\n"), "\n"); prose != "" {
				b.WriteString("\n" + prose + "\n")
			}
			if rows, ok := want[s.heading]; ok {
				b.WriteString("\n" + strings.Join(rows, "\n") + "\n")
			}
			b.WriteString("\n")
		}
		out := strings.TrimRight(b.String(), "\n") + "\n"
		if err := os.WriteFile(filepath.Join(repoRoot, "docs", "errors.md"), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, s := range sections {
		rows, ok := want[s.heading]
		switch {
		case !ok && len(s.table) > 0:
			t.Errorf("docs/errors.md: section %q has a code table, and no code is registered under it", s.heading)
		case ok && strings.Join(s.table, "\n") != strings.Join(rows, "\n"):
			got := map[string]bool{}
			for _, l := range s.table {
				got[l] = true
			}
			for _, l := range rows {
				if !got[l] {
					t.Errorf("docs/errors.md, section %q lacks or differs in the row:\n%s", s.heading, l)
				}
			}
			t.Errorf("docs/errors.md: section %q differs from the registry; run go test ./cmd/wharf -run TestErrorsDocumented -update", s.heading)
		}
	}
	envVars := map[string]bool{}
	for _, m := range envRow.FindAllStringSubmatch(readDoc(t, "cli.md"), -1) {
		envVars[m[1]] = true
	}
	src := sourceCodes(t)
	for _, code := range slices.Sorted(maps.Keys(src)) {
		if _, ok := errcode.Lookup(code); !ok && !envVars[code] {
			t.Errorf("%s (in %s) is neither a registered code nor an environment variable in docs/cli.md's table", code, src[code])
		}
	}
}
