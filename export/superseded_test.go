package export

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/dataset"
)

// topParts lists the part files directly at the prefix.
func topParts(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "part-*"))
	must(t, err)
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

func manifestKeys(ps []Part) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Key
	}
	return out
}

// TestSupersededPartsStayByDefault: runs of an export to one prefix leave every earlier run's
// parts beside the new ones (manifest.json lists the new ones only).
func TestSupersededPartsStayByDefault(t *testing.T) {
	f := newFixture(t, 30, 10)
	f.mustRun(t)
	res := f.mustRun(t)
	if got := topParts(t, f.prefix()); len(got) != 6 || len(res.Superseded) != 0 {
		t.Errorf("parts at the prefix: %v (moved %v)", got, res.Superseded)
	}
}

// TestSupersededPartsMovedOnceCertified: with superseded: move, once a run is certified the
// parts it does not list are moved: an earlier run's under _superseded/<its run id>/, an
// object bearing the run's own id that it did not write under _quarantine/<run id>/, so only
// the certified run's parts are left at the prefix; the dataset stays certified.
func TestSupersededPartsMovedOnceCertified(t *testing.T) {
	f := newFixture(t, 30, 10)
	f.exp.Superseded = SupersededMove
	first := f.mustRun(t)
	second := f.mustRun(t)
	if got, want := topParts(t, f.prefix()), manifestKeys(second.Parts); !slices.Equal(got, want) {
		t.Fatalf("after the second run: %v, want %v", got, want)
	}
	for _, p := range first.Parts {
		if _, err := os.Stat(filepath.Join(f.prefix(), dataset.SupersededDir, first.RunID, p.Key)); err != nil {
			t.Errorf("the first run's part was not kept under _superseded/: %v", err)
		}
	}
	// An interrupted third run; then an object at a key of its run id that it never wrote.
	res, o := failAt(t, f, 15)
	stray := partKey(res.RunID, 99, FormatParquet)
	must(t, os.WriteFile(filepath.Join(f.prefix(), stray), []byte("not ours"), 0o644))
	breakRow(t, f, 15, false)
	o.Resume = true
	third, err := f.run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := topParts(t, f.prefix()), manifestKeys(third.Parts); !slices.Equal(got, want) {
		t.Errorf("after the third run: %v, want %v", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(f.prefix(), dataset.QuarantineDir, third.RunID, stray)); err != nil || string(b) != "not ours" {
		t.Errorf("the stray object was not quarantined verbatim: %v", err)
	}
	var superseded int
	for _, to := range third.Superseded {
		if strings.HasPrefix(to, dataset.SupersededDir+second.RunID+"/") {
			superseded++
		}
	}
	if len(third.Superseded) != 4 || superseded != 3 {
		t.Errorf("moved %v", third.Superseded)
	}
	if v := f.validate(t, true); !v.Certified {
		t.Errorf("not certified after the moves: %+v", v.Problems)
	}
}
