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

const tableHead = "| Code | Exit | Class | Meaning | What to do |\n|---|---|---|---|---|"

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
	return fmt.Sprintf("| `%s` | %d | %s | %s | %s |", d.Name, d.Exit, d.Class, d.Meaning, d.Remedy)
}

// classesHeading is the section of docs/errors.md that explains the classes; it follows the
// exit codes, and classesSection writes all of it.
const (
	classesHeading = "Error classes"
	classesAfter   = "Exit codes"
)

// exportEnds is what an export does with a failure that no resume mends by itself.
const exportEnds = "the run fails, journaled failed unless nothing was attempted yet (exit 2)"

// classResponses is what each job does with an error of each class (and of none): the
// columns of the classes table after the class's meaning, which the registry gives.
var classResponses = map[errcode.Class][3]string{
	errcode.Outcome: {"—", "—", "—"},
	errcode.Transient: {"retries the file with the backoff, without limit",
		"reading an object: hands the split back and tries it again, the failure counted toward the object's `max_attempts` (reason `unreadable`); the coordinator or the sink failing past its retries: stops, and the same command resumes from the committed watermarks",
		"the run fails and is journaled failed; `--resume` continues it"},
	errcode.Poison: {"retries the file: a file is never left out",
		"quarantines the object after `max_attempts` failures; its split goes on without it, the job ends `WHARF_BACKFILL_QUARANTINED`",
		"the run fails naming the value or the object: a certified export never leaves a row out"},
	errcode.Operator: {"retries the file; three such failures in a row turn `/healthz` unhealthy until one passes",
		"stops at once, handing its splits back", exportEnds},
	errcode.Fatal: {"stops shipping: `/healthz` says fatal", "stops at once, handing its splits back",
		exportEnds},
	errcode.Unclassified: {"retries the file", "reading an object: the object's data is bad (reason `corrupt`), as `poison`", "the run fails"},
}

// classesSection returns the prose of the classes section: what a class is, and the table of
// classes from the registry's meanings and classResponses.
func classesSection() []string {
	lines := []string{
		"Every code has a class: what a job does when it meets an error of that code while it works.",
		"The jobs ask the class (`errcode.ClassOf` in Go), never a list of codes, so a new code is",
		"handled everywhere as its class says. When an error holds several codes (one wrapping",
		"another, or failures joined together) the most severe class decides, in the order of the",
		"table: `outcome` least, `fatal` most. A code that wraps another never hides its class: an",
		"export's `WHARF_EXPORT_WRITE_FAILED` wrapping `WHARF_FORBIDDEN` is `operator`. An error with",
		"no code is unclassified: the last row says what each job does with one.",
		"",
		"The class and the exit status answer two questions. The exit status says how a command",
		"ended (2: nothing was attempted); the class says what to do about the failure.",
		"`WHARF_CREDENTIAL_UNBOUND` exits 2, and is `operator`: `wharf ship` retries it until",
		"someone sets the variable.",
		"",
		"| Class | Meaning | `wharf ship` | `wharf backfill` | `wharf export` |",
		"|---|---|---|---|---|",
	}
	for _, c := range append(slices.Clone(errcode.Classes), errcode.Unclassified) {
		r := classResponses[c]
		name, meaning := "`"+c.String()+"`", c.Meaning()
		if c == errcode.Unclassified {
			name, meaning = "no code", "A plain error: a decoder's, the system's, a source driver's."
		}
		lines = append(lines, fmt.Sprintf("| %s | %s | %s | %s | %s |", name, meaning, r[0], r[1], r[2]))
	}
	return lines
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

// TestEveryCodeHasAClass holds every code linked into the program to a class of the registry's
// (errcode.New refuses a definition without one; this says so of the codes wharf has).
func TestEveryCodeHasAClass(t *testing.T) {
	if len(errcode.All()) < 20 {
		t.Fatalf("%d codes registered: the registry is not linked in", len(errcode.All()))
	}
	for _, c := range errcode.All() {
		if !slices.Contains(errcode.Classes, c.Class()) || c.Class().Meaning() == "" {
			t.Errorf("%s has class %v, not one of %v", c.Name(), c.Class(), errcode.Classes)
		}
		if _, ok := classResponses[c.Class()]; !ok {
			t.Errorf("%s: docs/errors.md says nothing of what the jobs do with class %v", c.Name(), c.Class())
		}
	}
}

// TestErrorsDocumented holds docs/errors.md to the code registry: every registered code has
// its row (exit status, class, meaning, what to do) under its section, the classes section
// explains the registry's classes, and no row names a code the
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
	if bySection[classesHeading] == nil {
		s := &docSection{heading: classesHeading}
		at := 0
		for i, o := range sections {
			if o.heading == classesAfter {
				at = i + 1
			}
		}
		sections = slices.Insert(sections, at, s)
		bySection[classesHeading] = s
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
		bySection[classesHeading].prose = classesSection()
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
	if got, want := strings.Trim(strings.Join(bySection[classesHeading].prose, "\n"), "\n"), strings.Join(classesSection(), "\n"); got != want {
		t.Errorf("docs/errors.md: section %q differs from the registry's classes:\n%s\nwant:\n%s\nrun go test ./cmd/wharf -run TestErrorsDocumented -update", classesHeading, got, want)
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
