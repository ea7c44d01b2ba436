package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The root command's help and this package's doc.go name every command a user can run.
func TestRootHelpAndDocNameEveryCommand(t *testing.T) {
	root := (&app{getenv: envOf(nil)}).rootCommand()
	names := []string{"completion"} // cobra adds it when the command runs
	for _, c := range root.Commands() {
		if !c.Hidden {
			names = append(names, c.Name())
		}
	}
	if len(names) < 10 {
		t.Fatalf("only %d commands: %v", len(names), names)
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []struct{ where, text string }{{"the root command's help", root.Long}, {"cmd/wharf/doc.go", string(doc)}} {
		for _, name := range names {
			if !regexp.MustCompile(`\b` + name + `\b`).MatchString(text.text) {
				t.Errorf("%s does not name the command %q", text.where, name)
			}
		}
	}
}

// goPackages returns the module's packages that have non-test Go files (paths relative to the
// module root, "/"-separated), each with the wharf packages its non-test files import.
func goPackages(t *testing.T) map[string][]string {
	t.Helper()
	const module = "github.com/wharfdata/wharf/"
	pkgs := map[string][]string{}
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
		rel, err := filepath.Rel(repoRoot, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		imports := pkgs[rel]
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if q, ok := strings.CutPrefix(p, module); ok && !slices.Contains(imports, q) {
				imports = append(imports, q)
			}
		}
		pkgs[rel] = imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// layerRows reads the package map of docs/architecture.md: the row of each package, 0 at the
// top. A row is a line that starts with a name; the names are its first column (a backend
// group written store/{a,b} is each of them, internal/… is the internal packages its rows
// name), and a package path that its description names (cas/natskv) is in that row too.
func layerRows(t *testing.T, pkgs map[string][]string) map[string]int {
	t.Helper()
	doc := readDoc(t, "architecture.md")
	_, block, ok := strings.Cut(doc, "\n```\n")
	block, _, ok2 := strings.Cut(block, "\n```\n")
	if !ok || !ok2 {
		t.Fatal("docs/architecture.md has no package map")
	}
	braces := regexp.MustCompile(`^(.*)\{([^}]*)\}$`)
	rows := map[string]int{}
	row := -1
	for _, line := range strings.Split(block, "\n") {
		if line == "" {
			continue
		}
		if line[0] != ' ' {
			row++
		}
		for i, tok := range strings.Fields(strings.NewReplacer("(", " ", ")", " ", ",", " ", ":", " ").Replace(line)) {
			names := []string{tok}
			if m := braces.FindStringSubmatch(strings.Fields(line)[0]); i == 0 && m != nil {
				names = nil
				for _, b := range strings.Split(m[2], ",") {
					names = append(names, m[1]+b)
				}
			}
			inNames := line[0] != ' ' && strings.Index(line, tok) < 30
			for _, n := range names {
				if tok == "internal/…" { // each internal package by its name, in the rows it starts
					_, tail, _ := strings.Cut(block, line)
					for p := range pkgs {
						base, ok := strings.CutPrefix(p, "internal/")
						if ok && regexp.MustCompile(`\b`+base+`\b`).MatchString(line+tail) {
							rows[p] = row
						}
					}
				}
				if _, known := pkgs[n]; known && (inNames || strings.Contains(n, "/")) {
					if _, seen := rows[n]; !seen {
						rows[n] = row
					}
				}
			}
		}
	}
	return rows
}

// docs/architecture.md's package map names every package, and imports point down it except
// where the page says: a package of a row may import its parent directory's (cas/natskv
// imports cas) and internal packages each other, and the exceptions listed below the map.
func TestArchitectureDocMapsEveryPackageAndImport(t *testing.T) {
	pkgs := goPackages(t)
	rows := layerRows(t, pkgs)
	for p := range pkgs {
		if _, ok := rows[p]; !ok {
			t.Errorf("docs/architecture.md's package map does not name %s", p)
		}
	}
	exceptions := map[[2]string]bool{ // as "The imports that do not point down" says
		{"ship", "spool"}: true, {"internal/testenv", "store"}: true, {"internal/icebird", "store"}: true,
	}
	for p, imports := range pkgs {
		for _, q := range imports {
			if rows[q] > rows[p] || exceptions[[2]string{p, q}] {
				continue
			}
			if rows[q] == rows[p] && (strings.HasPrefix(p, q+"/") || strings.HasPrefix(p, "internal/") && strings.HasPrefix(q, "internal/")) {
				continue
			}
			t.Errorf("%s imports %s, which docs/architecture.md's map does not put below it", p, q)
		}
	}
	doc := readDoc(t, "architecture.md")
	for e := range exceptions {
		if !slices.Contains(pkgs[e[0]], e[1]) {
			t.Errorf("docs/architecture.md names %s importing %s, which it no longer does", e[0], e[1])
		}
		if said := "`" + e[0] + "` imports `" + e[1] + "`"; !strings.Contains(doc, said) {
			t.Errorf("docs/architecture.md does not say %s", said)
		}
	}
}

// What docs/architecture.md says of who imports the backends and store/driver: only cmd/wharf
// imports a backend (backends.go, and config.go for file.IsStore); no job imports store/driver.
func TestArchitectureDocBackendAndDriverImports(t *testing.T) {
	backends := []string{"store/s3", "store/gcs", "store/azure", "store/file", "store/mem", "store/stdout"}
	jobs := []string{"export", "ship", "spool", "transfer", "backfill", "lease", "cas"}
	var got, want []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		for _, im := range f.Imports {
			q := strings.TrimPrefix(strings.Trim(im.Path.Value, `"`), "github.com/wharfdata/wharf/")
			switch {
			case slices.Contains(backends, q) && !strings.HasPrefix(dir, "store/"):
				got = append(got, rel+" imports "+q)
			case q == "store/driver" && slices.Contains(jobs, strings.Split(dir, "/")[0]):
				got = append(got, dir+" imports "+q)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range backends {
		want = append(want, "cmd/wharf/backends.go imports "+b)
	}
	want = append(want, "cmd/wharf/config.go imports store/file")
	slices.Sort(got)
	got = slices.Compact(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the imports of backends and of store/driver by jobs are\n  %s\ndocs/architecture.md says\n  %s",
			strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// No code outside the backends asks which backend it holds (docs/architecture.md, "Where a
// new backend goes"): no comparison of a scheme with a backend's name, and no switch on one.
// What differs between backends the store says of itself (LocalPath, CreateDir, BucketNoun…).
func TestNoCodeOutsideTheBackendsAsksWhichBackendItHolds(t *testing.T) {
	asks := regexp.MustCompile(`Scheme\s*(==|!=)\s*"(file|s3|r2|gs|az|mem|stdout)"|case "(file|s3|r2|gs|az|mem|stdout)"`)
	var got []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		rel = filepath.ToSlash(rel)
		if parts := strings.Split(rel, "/"); len(parts) > 2 && parts[0] == "store" && parts[1] != "probe" {
			return nil // a backend (or driver, upload, storetest): their own business
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if asks.MatchString(line) {
				got = append(got, rel+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 0 {
		t.Errorf("code outside store/<backend> asks which backend it holds:\n  %s", strings.Join(got, "\n  "))
	}
}
