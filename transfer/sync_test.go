package transfer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
)

func openMem(t *testing.T, url string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func planSync(t *testing.T, src, dst string, o SyncOptions) *SyncPlan {
	t.Helper()
	o.Jobs = 2
	sp, err := PlanSync(context.Background(), testStores, src, dst, o)
	if err != nil {
		t.Fatalf("PlanSync(%s, %s): %v", src, dst, err)
	}
	t.Cleanup(sp.Close)
	return sp
}

func dsts(tasks []Task) []string {
	var out []string
	for _, t := range tasks {
		out = append(out, t.Dst)
	}
	slices.Sort(out)
	return out
}

// TestSyncCopiesWhatIsMissingOrChanged: a sync creates what the destination lacks, replaces
// what it holds another version of (the source changed after the destination was written),
// leaves what it holds alone, and removes what is only there only with Delete; a second sync
// finds nothing to do.
func TestSyncCopiesWhatIsMissingOrChanged(t *testing.T) {
	ctx := context.Background()
	src, dst := openMem(t, "mem://sync-src"), openMem(t, "mem://sync-dst")
	put(t, dst, "out/b", "old")  // written before its source changed
	put(t, src, "in/a", "AAA")   //
	put(t, src, "in/b", "new")   // the same size as out/b, newer
	put(t, src, "in/c/d", "DDD") // missing at the destination
	put(t, dst, "out/a", "AAA")  // written after its source: unchanged
	put(t, dst, "out/z", "zzz")  // only in the destination

	sp := planSync(t, "mem://sync-src/in", "mem://sync-dst/out/", SyncOptions{})
	if got := dsts(sp.Tasks); !slices.Equal(got, []string{"out/b", "out/c/d"}) || sp.Unchanged != 1 || sp.Replaces != 1 || len(sp.Removals) != 0 {
		t.Fatalf("plan: copies %q, unchanged %d, replaces %d, removals %v", got, sp.Unchanged, sp.Replaces, sp.Removals)
	}
	for _, tk := range sp.Tasks {
		if tk.Dst == "out/b" && (tk.IfMatch == "" || tk.IfAbsent) || tk.Dst == "out/c/d" && (!tk.IfAbsent || tk.IfMatch != "") {
			t.Errorf("task %s: IfAbsent %v IfMatch %q: want a create of a missing key, a replace of the listed version", tk.Dst, tk.IfAbsent, tk.IfMatch)
		}
	}
	sum, err := sp.Run(ctx, nil, SyncReport{})
	if err != nil || sum.Files != 2 || sum.Unchanged != 1 || sum.Removed != 0 {
		t.Fatalf("Run = %+v, %v", sum, err)
	}
	for k, want := range map[string]string{"out/a": "AAA", "out/b": "new", "out/c/d": "DDD", "out/z": "zzz"} {
		if got := get(t, dst, k); got != want {
			t.Errorf("%s holds %q, want %q", k, got, want)
		}
	}

	var removed []string
	sp = planSync(t, "mem://sync-src/in/", "mem://sync-dst/out", SyncOptions{Delete: true, MaxDelete: -1})
	if len(sp.Tasks) != 0 || sp.Unchanged != 3 || len(sp.Removals) != 1 || sp.Removals[0].Key != "out/z" {
		t.Fatalf("second plan: copies %q, unchanged %d, removals %v", dsts(sp.Tasks), sp.Unchanged, sp.Removals)
	}
	if _, err := sp.Run(ctx, nil, SyncReport{Removed: func(n string) { removed = append(removed, n) }}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{"mem://sync-dst/out/z"}) {
		t.Errorf("removed %q", removed)
	}
	for k, gone := range map[string]bool{"out/z": true, "out/a": false} {
		if _, err := dst.Head(ctx, k); errors.Is(err, store.ErrNotExist) != gone {
			t.Errorf("%s after --delete: %v (want gone: %v)", k, err, gone)
		}
	}
}

// TestSyncDeleteGuards: nothing is removed from a sync's destination when the source is
// empty (refused unless allowed), when the source listing passed over something, or when
// there is more to remove than MaxDelete (the zero value allowing none); the copies are made.
func TestSyncDeleteGuards(t *testing.T) {
	ctx := context.Background()
	openMem(t, "mem://guard-src")
	dst := openMem(t, "mem://guard-dst")
	put(t, dst, "x", "x")
	put(t, dst, "y", "y")
	_, err := PlanSync(ctx, testStores, "mem://guard-src/none/", "mem://guard-dst/", SyncOptions{Delete: true, MaxDelete: -1})
	if !errors.Is(err, ErrEmptySource) {
		t.Fatalf("empty source: %v, want ErrEmptySource", err)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    SyncOptions
	}{
		{"max-delete 1", SyncOptions{Delete: true, MaxDelete: 1}},
		{"max-delete unset", SyncOptions{Delete: true}},
	} {
		sp := planSync(t, dir, "mem://guard-dst/", tc.o)
		if !errors.Is(sp.DeleteRefused, ErrDeleteRefused) || len(sp.Removals) != 2 {
			t.Fatalf("%s: DeleteRefused %v, removals %v", tc.name, sp.DeleteRefused, sp.Removals)
		}
		sum, err := sp.Run(ctx, nil, SyncReport{})
		if !errors.Is(err, ErrDeleteRefused) || sum.Files != 1 || sum.Removed != 0 {
			t.Fatalf("%s: Run = %+v, %v; want the copy made, nothing removed, ErrDeleteRefused", tc.name, sum, err)
		}
		for _, k := range []string{"x", "y", "a"} {
			if _, err := dst.Head(ctx, k); err != nil {
				t.Errorf("%s: %s: %v", tc.name, k, err)
			}
		}
		if err := dst.Delete(ctx, "a", nil); err != nil {
			t.Fatal(err)
		}
	}

	// A broken link in the source: what it stands for is unknown, so nothing is removed.
	if err := os.Symlink(filepath.Join(dir, "missing"), filepath.Join(dir, "x")); err != nil {
		t.Fatal(err)
	}
	var passed []string
	sp, err := PlanSync(ctx, testStores, dir, "mem://guard-dst/", SyncOptions{Delete: true, MaxDelete: -1,
		CopyOptions: CopyOptions{Skipped: func(n string, _ error) { passed = append(passed, n) }}})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if sp.Passed != 1 || len(passed) != 1 || !errors.Is(sp.DeleteRefused, ErrDeleteRefused) || !strings.Contains(sp.DeleteRefused.Error(), "passed over 1") {
		t.Fatalf("passed %d %q, DeleteRefused %v", sp.Passed, passed, sp.DeleteRefused)
	}
	if _, err := sp.Run(ctx, nil, SyncReport{}); !errors.Is(err, ErrDeleteRefused) {
		t.Fatalf("Run: %v, want ErrDeleteRefused", err)
	}
	if got := get(t, dst, "x"); got != "x" {
		t.Errorf("x holds %q after a refused delete", got)
	}

	// An empty source allowed: the destination is emptied.
	sp = planSync(t, "mem://guard-src/none/", "mem://guard-dst/", SyncOptions{Delete: true, MaxDelete: -1, AllowEmptySource: true})
	sum, err := sp.Run(ctx, nil, SyncReport{})
	if err != nil || sum.Removed != 3 {
		t.Fatalf("allowed empty source: %+v, %v; want 3 removed", sum, err)
	}
}

// TestSyncLeavesWhatAnotherWriterChanged: every write of a sync is conditional on what it
// listed. A destination another writer replaced or created after the listing is left as that
// writer made it, named, and the sync ends with ErrSyncConflict and removes nothing; a
// removal of an object replaced meanwhile is refused the same way.
func TestSyncLeavesWhatAnotherWriterChanged(t *testing.T) {
	ctx := context.Background()
	src, dst := openMem(t, "mem://conflict-src"), openMem(t, "mem://conflict-dst")
	put(t, dst, "b", "old")
	put(t, src, "a", "a1")
	put(t, src, "b", "b1")
	put(t, src, "c", "c1")
	put(t, dst, "z", "z0")
	sp := planSync(t, "mem://conflict-src/", "mem://conflict-dst/", SyncOptions{Delete: true, MaxDelete: -1})
	put(t, dst, "b", "writer") // the replace was planned against "old"
	put(t, dst, "c", "writer") // the create was planned against nothing
	var named []string
	sum, err := sp.Run(ctx, nil, SyncReport{Conflict: func(n string, _ error) { named = append(named, n) }})
	slices.Sort(named)
	if !errors.Is(err, ErrSyncConflict) || sum.Conflicts != 2 || sum.Files != 1 || sum.Removed != 0 ||
		!slices.Equal(named, []string{"mem://conflict-dst/b", "mem://conflict-dst/c"}) {
		t.Fatalf("Run = %+v, %v, named %q; want a copied, b and c refused, nothing removed", sum, err, named)
	}
	for k, want := range map[string]string{"a": "a1", "b": "writer", "c": "writer", "z": "z0"} {
		if got := get(t, dst, k); got != want {
			t.Errorf("%s holds %q, want %q", k, got, want)
		}
	}

	sp = planSync(t, "mem://conflict-src/", "mem://conflict-dst/", SyncOptions{Delete: true, MaxDelete: -1})
	if len(sp.Removals) != 1 {
		t.Fatalf("removals %v", sp.Removals)
	}
	put(t, dst, "z", "z1") // replaced after the listing: not the version to remove
	named = nil
	sum, err = sp.Run(ctx, nil, SyncReport{Conflict: func(n string, _ error) { named = append(named, n) }})
	if !errors.Is(err, ErrSyncConflict) || sum.Removed != 0 || !slices.Equal(named, []string{"mem://conflict-dst/z"}) {
		t.Fatalf("Run = %+v, %v, named %q; want z kept", sum, err, named)
	}
	if got := get(t, dst, "z"); got != "z1" {
		t.Errorf("z holds %q, want the writer's z1", got)
	}
}

// TestSyncToLocalIsConditional: into a local directory a replace and a removal hold only
// while the file keeps the modification time and size it was listed with (LocalETag).
func TestSyncToLocalIsConditional(t *testing.T) {
	ctx := context.Background()
	src := openMem(t, "mem://local-src")
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, n := range []string{"b", "z", "y"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	put(t, src, "a", "a1")
	put(t, src, "b", "b1!")
	put(t, src, "y", "y1!")
	sp := planSync(t, "mem://local-src/", dir, SyncOptions{Delete: true, MaxDelete: -1})
	if got := dsts(sp.Tasks); !slices.Equal(got, []string{"a", "b", "y"}) || len(sp.Removals) != 1 {
		t.Fatalf("plan: %q, removals %v", got, sp.Removals)
	}
	if err := os.WriteFile(filepath.Join(dir, "b"), []byte("writer"), 0o644); err != nil {
		t.Fatal(err)
	}
	var named []string
	_, err := sp.Run(ctx, nil, SyncReport{Conflict: func(n string, _ error) { named = append(named, n) }})
	if !errors.Is(err, ErrSyncConflict) || !slices.Equal(named, []string{filepath.Join(dir, "b")}) {
		t.Fatalf("Run: %v, named %q; want b refused", err, named)
	}
	for n, want := range map[string]string{"a": "a1", "b": "writer", "y": "y1!", "z": "old"} {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", n, b, err, want)
		}
	}

	sp = planSync(t, "mem://local-src/", dir, SyncOptions{Delete: true, MaxDelete: -1})
	if err := os.WriteFile(filepath.Join(dir, "z"), []byte("newer"), 0o644); err != nil {
		t.Fatal(err)
	}
	named = nil
	if _, err := sp.Run(ctx, nil, SyncReport{Conflict: func(n string, _ error) { named = append(named, n) }}); !errors.Is(err, ErrSyncConflict) || len(named) != 1 {
		t.Fatalf("Run: %v, named %q; want z kept", err, named)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "z")); string(b) != "newer" {
		t.Errorf("z holds %q", b)
	}
}

// TestSyncRefusesOverlap: a source and destination one inside the other are refused.
func TestSyncRefusesOverlap(t *testing.T) {
	ctx := context.Background()
	m := openMem(t, "mem://sync-overlap")
	put(t, m, "a/x", "x")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{
		{"mem://sync-overlap/a", "mem://sync-overlap/a/b"},
		{"mem://sync-overlap/a/", "mem://sync-overlap/"},
		{"mem://sync-overlap/a", "mem://sync-overlap/a"},
		{dir, filepath.Join(dir, "sub")},
		{"-", "mem://sync-overlap/k"},
	} {
		_, err := PlanSync(ctx, testStores, c[0], c[1], SyncOptions{})
		var u *UsageError
		if !errors.As(err, &u) {
			t.Errorf("sync %s %s: %v, want a usage error", c[0], c[1], err)
		}
	}
}

// TestUnchanged: the same size, and the same MD5 ETags between MD5 stores, else a
// destination no older than its source.
func TestUnchanged(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	md5a, md5b := strings.Repeat("a", 32), strings.Repeat("b", 32)
	for _, tc := range []struct {
		name string
		t    Task
		d    store.ObjectInfo
		md5s bool
		want bool
	}{
		{"sizes differ", Task{Size: 3, srcTime: t0}, store.ObjectInfo{Size: 4, LastModified: t0.Add(time.Hour)}, false, false},
		{"newer destination", Task{Size: 3, srcTime: t0}, store.ObjectInfo{Size: 3, LastModified: t0.Add(time.Second)}, false, true},
		{"same time", Task{Size: 3, srcTime: t0.Add(time.Millisecond)}, store.ObjectInfo{Size: 3, LastModified: t0.Add(time.Millisecond)}, false, true},
		{"source kept to the second", Task{Size: 3, srcTime: t0}, store.ObjectInfo{Size: 3, LastModified: t0.Add(999 * time.Millisecond)}, false, false},
		{"source kept to the second, next second", Task{Size: 3, srcTime: t0}, store.ObjectInfo{Size: 3, LastModified: t0.Add(time.Second)}, false, true},
		{"older destination", Task{Size: 3, srcTime: t0}, store.ObjectInfo{Size: 3, LastModified: t0.Add(-time.Second)}, false, false},
		{"no time", Task{Size: 3}, store.ObjectInfo{Size: 3, LastModified: t0}, false, false},
		{"same md5, older", Task{Size: 3, srcTime: t0, srcETag: md5a}, store.ObjectInfo{Size: 3, ETag: md5a, LastModified: t0.Add(-time.Hour)}, true, true},
		{"other md5, newer", Task{Size: 3, srcTime: t0, srcETag: md5a}, store.ObjectInfo{Size: 3, ETag: md5b, LastModified: t0.Add(time.Hour)}, true, false},
		{"md5s not comparable", Task{Size: 3, srcTime: t0, srcETag: md5a}, store.ObjectInfo{Size: 3, ETag: md5b, LastModified: t0.Add(time.Hour)}, false, true},
		{"multipart etag", Task{Size: 3, srcTime: t0, srcETag: md5a}, store.ObjectInfo{Size: 3, ETag: md5b[:30] + "-2", LastModified: t0.Add(time.Hour)}, true, true},
		{"same crc32c, older", Task{Size: 3, srcTime: t0, srcCRC: "AAAAAQ=="}, store.ObjectInfo{Size: 3, CRC32C: "AAAAAQ==", LastModified: t0.Add(-time.Hour)}, false, true},
		{"other crc32c, newer", Task{Size: 3, srcTime: t0, srcCRC: "AAAAAQ=="}, store.ObjectInfo{Size: 3, CRC32C: "AAAAAg==", LastModified: t0.Add(time.Hour)}, false, false},
		{"other crc32c, same md5", Task{Size: 3, srcTime: t0, srcETag: md5a, srcCRC: "AAAAAQ=="}, store.ObjectInfo{Size: 3, ETag: md5a, CRC32C: "AAAAAg=="}, true, false},
		{"one crc32c only", Task{Size: 3, srcTime: t0, srcCRC: "AAAAAQ=="}, store.ObjectInfo{Size: 3, LastModified: t0.Add(time.Hour)}, false, true},
	} {
		if got := unchanged(tc.t, tc.d, tc.md5s); got != tc.want {
			t.Errorf("%s: unchanged = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestTreeRootGivenAsALink: a directory named by a symbolic link to it is copied and synced
// as that directory (the names below it keep the link's spelling in output).
func TestTreeRootGivenAsALink(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "sub", "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	openMem(t, "mem://link-root")
	p, err := PlanCopy(ctx, testStores, link, "mem://link-root/out/", CopyOptions{Recursive: true})
	if err != nil {
		t.Fatalf("cp -r of a link to a directory: %v", err)
	}
	defer p.Close()
	if got := dsts(p.Tasks); !slices.Equal(got, []string{"out/sub/a.txt"}) {
		t.Errorf("cp -r of a link plans %q", got)
	}
	if src, _ := p.Names(p.Tasks[0]); src != filepath.Join(link, "sub", "a.txt") {
		t.Errorf("the source is named %q, want it under the link", src)
	}
	sp := planSync(t, link, "mem://link-root/mirror/", SyncOptions{})
	if len(sp.Tasks) != 1 {
		t.Errorf("sync of a link plans %q", dsts(sp.Tasks))
	}
}
