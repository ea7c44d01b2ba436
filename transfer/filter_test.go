package transfer

import (
	"context"
	"slices"
	"testing"
)

// TestFilter: every name is taken, then the last rule that matches decides; * crosses '/'.
func TestFilter(t *testing.T) {
	type rule struct {
		include bool
		pattern string
	}
	for _, tc := range []struct {
		name  string
		rules []rule
		takes map[string]bool
	}{
		{"none", nil, map[string]bool{"a": true, "x/y.gz": true}},
		{"exclude at any depth", []rule{{false, "*.tmp"}}, map[string]bool{"a.tmp": false, "d/e/a.tmp": false, "a.tmpx": true}},
		{"the last match decides", []rule{{false, "*"}, {true, "*.gz"}, {false, "old/*"}},
			map[string]bool{"a.gz": true, "x/a.gz": true, "old/a.gz": false, "a.txt": false}},
		{"include alone takes all", []rule{{true, "*.gz"}}, map[string]bool{"a.txt": true}},
		{"? and sets", []rule{{false, "*"}, {true, "2024-0[1-3]/?.csv"}, {true, "[!a-z0-9]*"}},
			map[string]bool{"2024-02/a.csv": true, "2024-04/a.csv": false, "2024-01/ab.csv": false, "_lives": true, "zebra": false}},
		{"escapes and metacharacters", []rule{{false, `a\*b`}, {false, "x.(y)+"}}, map[string]bool{"a*b": false, "aab": true, "x.(y)+": false, "xx(y)": true}},
	} {
		var f Filter
		for _, r := range tc.rules {
			var err error
			if r.include {
				err = f.Include(r.pattern)
			} else {
				err = f.Exclude(r.pattern)
			}
			if err != nil {
				t.Fatalf("%s: %s: %v", tc.name, r.pattern, err)
			}
		}
		for name, want := range tc.takes {
			if got := f.Takes(name); got != want {
				t.Errorf("%s: Takes(%q) = %v, want %v", tc.name, name, got, want)
			}
		}
	}
	var f Filter
	for _, bad := range []string{"a[b", `a\`, "[]", "[!]"} {
		if err := f.Exclude(bad); err == nil {
			t.Errorf("Exclude(%q) accepted a broken pattern", bad)
		}
	}
}

func TestSplitWildcard(t *testing.T) {
	for key, want := range map[string][2]string{
		"logs/2024-*/*.gz": {"logs/", "2024-*/*.gz"},
		"*.gz":             {"", "*.gz"},
		"a/b/c?":           {"a/b/", "c?"},
		"a/[xy]/z":         {"a/", "[xy]/z"},
	} {
		base, pattern, ok := SplitWildcard(key)
		if !ok || base != want[0] || pattern != want[1] {
			t.Errorf("SplitWildcard(%q) = %q, %q, %v; want %q, %q", key, base, pattern, ok, want[0], want[1])
		}
	}
	if _, _, ok := SplitWildcard("a/b"); ok {
		t.Error("a key without a wildcard was split")
	}
}

// TestWildcardAndFilterChooseWhatIsCopied: a wildcard in a source key copies the objects
// below its prefix that match it, keeping their names below that prefix, with no -r; a
// filter narrows a recursive copy; a sync with --delete removes only what its filter takes.
func TestWildcardAndFilterChooseWhatIsCopied(t *testing.T) {
	ctx := context.Background()
	m := openMem(t, "mem://wild")
	for _, k := range []string{"logs/2024-01/a.gz", "logs/2024-01/b.txt", "logs/2024-02/c.gz", "logs/2023-12/d.gz", "logs/e.gz"} {
		put(t, m, k, k)
	}
	p, err := PlanCopy(ctx, testStores, "mem://wild/logs/2024-*/*.gz", "mem://wild/out/", CopyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got := dsts(p.Tasks); !slices.Equal(got, []string{"out/2024-01/a.gz", "out/2024-02/c.gz"}) {
		t.Errorf("wildcard copy plans %q", got)
	}

	f := &Filter{}
	if err := f.Exclude("*.txt"); err != nil {
		t.Fatal(err)
	}
	if err := f.Exclude("2023-*"); err != nil {
		t.Fatal(err)
	}
	p, err = PlanCopy(ctx, testStores, "mem://wild/logs/", "mem://wild/out2/", CopyOptions{Recursive: true, Filter: f})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got := dsts(p.Tasks); !slices.Equal(got, []string{"out2/2024-01/a.gz", "out2/2024-02/c.gz", "out2/e.gz"}) {
		t.Errorf("filtered copy plans %q", got)
	}
	if _, err := PlanCopy(ctx, testStores, "mem://wild/logs/e.gz", "mem://wild/x", CopyOptions{Filter: f}); err == nil {
		t.Error("a filter on a copy of one object was accepted")
	}

	put(t, m, "mirror/keep.txt", "k") // excluded: neither compared nor removed
	put(t, m, "mirror/stale.gz", "s") // taken, only in the destination: removed
	sp := planSync(t, "mem://wild/logs/", "mem://wild/mirror/", SyncOptions{Delete: true, MaxDelete: -1, CopyOptions: CopyOptions{Filter: f}})
	if len(sp.Removals) != 1 || sp.Removals[0].Key != "mirror/stale.gz" || len(sp.Tasks) != 3 {
		t.Fatalf("filtered sync: copies %q, removals %v", dsts(sp.Tasks), sp.Removals)
	}
	n, err := Remove(ctx, m, "logs/", f.Takes, false, func(string) error { return nil })
	if err != nil || n != 3 {
		t.Fatalf("filtered Remove = %d, %v; want 3", n, err)
	}
	if got := get(t, m, "logs/2024-01/b.txt"); got != "logs/2024-01/b.txt" {
		t.Errorf("an excluded object was removed: %q", got)
	}
}
