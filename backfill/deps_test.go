package backfill

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependsOnNoExport holds the promise that a backfill links no database driver and no
// Arrow or Parquet package: it writes the dataset contract through package dataset, never
// through export (issue 22: `go list -deps` of backfill held pgx, SQLite and Parquet).
func TestDependsOnNoExport(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go list needs the go command: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	list := strings.Fields(string(out))
	if len(list) < 20 || !strings.Contains(string(out), "github.com/wharfdata/wharf/dataset\n") {
		t.Fatalf("go list -deps listed %d packages, without dataset: %q", len(list), list)
	}
	for _, dep := range list {
		for _, h := range []string{"github.com/jackc/pgx", "modernc.org/sqlite", "github.com/apache/arrow-go", "github.com/wharfdata/wharf/export"} {
			if dep == h || strings.HasPrefix(dep, h+"/") {
				t.Errorf("backfill depends on %s", dep)
			}
		}
	}
}
