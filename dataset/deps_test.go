package dataset

import (
	"os/exec"
	"strings"
	"testing"
)

// heavy are the packages the contract must not pull into a program that only reads or writes
// it: the database drivers and Arrow/Parquet, which export links in for its sources and
// formats.
var heavy = []string{"github.com/jackc/pgx", "modernc.org/sqlite", "github.com/apache/arrow-go", "github.com/wharfdata/wharf/export"}

// TestDependsOnNoSourceOrFormatLibrary holds dataset's promise: it imports no database driver,
// no Arrow or Parquet package, and not export.
func TestDependsOnNoSourceOrFormatLibrary(t *testing.T) {
	for _, dep := range deps(t, ".") {
		for _, h := range heavy {
			if dep == h || strings.HasPrefix(dep, h+"/") {
				t.Errorf("dataset depends on %s", dep)
			}
		}
	}
}

// deps is what `go list -deps` lists for pkg.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go list needs the go command: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	list := strings.Fields(string(out))
	if len(list) < 20 {
		t.Fatalf("go list -deps %s listed %d packages: %q", pkg, len(list), list)
	}
	return list
}
