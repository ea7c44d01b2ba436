package spool

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
)

func TestInitLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "spool")
	info, err := Init(dir)
	must(t, err)
	if info.Dir != dir || info.Epoch == 0 || info.Format != Format || time.Since(info.Created) > time.Minute {
		t.Errorf("info %+v", info)
	}
	for _, p := range []string{MetaFile, ReadyDir, TmpDir, CatalogFile, LockFile} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("layout: %v", err)
		}
	}
	var m map[string]any
	must(t, json.Unmarshal([]byte(readText(t, filepath.Join(dir, MetaFile))), &m))
	if m["epoch"] != info.EpochHex() || m["format"] != float64(1) || m["created"] == nil {
		t.Errorf("spool.json %v, epoch %s", m, info.EpochHex())
	}
	other, err := Init(filepath.Join(t.TempDir(), "b"))
	must(t, err)
	if other.Epoch == info.Epoch {
		t.Error("two spools got the same epoch")
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".spool.json.*"))
	if len(leftovers) > 0 {
		t.Errorf("init left %v", leftovers)
	}
}

func TestInitRefusesExistingAndNonEmpty(t *testing.T) {
	dir := newSpool(t)
	add(t, dir, "events", "x\n", AddOptions{})
	before := readText(t, filepath.Join(dir, CatalogFile))
	_, err := Init(dir)
	wantKind(t, err, ErrExists, dir, "never reset")
	if readText(t, filepath.Join(dir, CatalogFile)) != before {
		t.Error("init on a spool changed its catalog")
	}

	busy := t.TempDir()
	writeSrc(t, busy, "notes.txt", "mine")
	_, err = Init(busy)
	wantKind(t, err, ErrNotSpool, busy, "notes.txt")
	if _, err := os.Stat(filepath.Join(busy, MetaFile)); !errors.Is(err, os.ErrNotExist) {
		t.Error("init on a non-empty directory wrote spool.json")
	}

	file := writeSrc(t, t.TempDir(), "plain", "")
	_, err = Init(file)
	wantKind(t, err, ErrNotSpool, file, "not a directory")
}

func TestInitFinishesAnInterruptedInit(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, ReadyDir), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, CatalogFile), nil, 0o644))
	if _, err := Init(dir); err != nil {
		t.Fatalf("init over what an interrupted init left: %v", err)
	}
	if _, err := readInfo("test", dir); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesNotASpool(t *testing.T) {
	empty := t.TempDir()
	_, err := Open(empty, OpenOptions{})
	wantKind(t, err, ErrNotSpool, empty, "wharf spool init")
	missing := filepath.Join(empty, "nope")
	_, err = Open(missing, OpenOptions{})
	wantKind(t, err, ErrNotSpool, missing, "wharf spool init")
	_, err = Add(bg, empty, writeSrc(t, t.TempDir(), "a.csv", "x"), AddOptions{Dataset: "d"})
	wantKind(t, err, ErrNotSpool, "wharf spool init")

	dir := newSpool(t)
	must(t, os.WriteFile(filepath.Join(dir, MetaFile), []byte(`{"format":9,"epoch":"0000000000000001"}`), 0o644))
	_, err = Open(dir, OpenOptions{})
	wantKind(t, err, ErrNotSpool, filepath.Join(dir, MetaFile), "format 9")

	dir = newSpool(t)
	must(t, os.Remove(filepath.Join(dir, TmpDir)))
	_, err = Open(dir, OpenOptions{})
	wantKind(t, err, ErrNotSpool, filepath.Join(dir, TmpDir))
}

func TestAddOpenRoundTrip(t *testing.T) {
	dir := newSpool(t)
	srcDir := t.TempDir()
	a := writeSrc(t, srcDir, "a.ndjson", "{\"a\":1}\n")
	b := writeSrc(t, srcDir, "b.csv.gz", "gzip-ish")
	c := writeSrc(t, srcDir, "noext", "raw")
	mtime := time.Date(2025, 12, 31, 23, 59, 59, 0, time.FixedZone("x", 3600))
	must(t, os.Chtimes(c, mtime, mtime))

	fa, err := Add(bg, dir, a, AddOptions{Dataset: "events", Time: t0, Records: 10})
	must(t, err)
	fb, err := Add(bg, dir, b, AddOptions{Dataset: "events"})
	must(t, err)
	fc, err := Add(bg, dir, c, AddOptions{Dataset: "raw-2", Copy: true})
	must(t, err)

	if fa.First != 1 || fa.Last != 10 || fa.ID != 1 || fb.First != 11 || fb.Last != 11 || fc.First != 12 {
		t.Errorf("sequence numbers: a %d-%d, b %d-%d, c %d-%d", fa.First, fa.Last, fb.First, fb.Last, fc.First, fc.Last)
	}
	if fa.Name != "ready/events/00000000000000000001_00000000000000000010.ndjson" ||
		fb.Name != "ready/events/00000000000000000011_00000000000000000011.csv.gz" ||
		fc.Name != "ready/raw-2/00000000000000000012_00000000000000000012.bin" {
		t.Errorf("names %s %s %s", fa.Name, fb.Name, fc.Name)
	}
	if !fa.Time.Equal(t0) || !fc.Time.Equal(mtime) || fc.Time.Location() != time.UTC {
		t.Errorf("event times %v %v (mtime %v)", fa.Time, fc.Time, mtime)
	}
	if fa.SHA256 != sha([]byte("{\"a\":1}\n")) || fa.Size != 8 || fileSHA(t, fa.Path) != fa.SHA256 {
		t.Errorf("a: size %d sha %s", fa.Size, fa.SHA256)
	}

	s := open(t, dir, nil)
	got := s.Pending()
	if len(got) != 3 {
		t.Fatalf("pending %d files, want 3", len(got))
	}
	for i, want := range []File{fa, fb, fc} {
		g := got[i]
		if g.ID != want.ID || g.Path != want.Path || g.SHA256 != want.SHA256 || g.Size != want.Size ||
			!g.Time.Equal(want.Time) || g.Dataset != want.Dataset || g.Ext != want.Ext || g.State != Eligible {
			t.Errorf("pending[%d] = %+v, want %+v", i, g, want)
		}
	}
	if st := s.Stats(); st.Eligible.Files != 3 || st.Eligible.Bytes != fa.Size+fb.Size+fc.Size || st.Uploaded.Files != 0 {
		t.Errorf("stats %+v", st)
	}
	if s.Next() != 13 || s.Epoch() == 0 || s.Dir() != dir {
		t.Errorf("next %d epoch %x dir %s", s.Next(), s.Epoch(), s.Dir())
	}
	lines := catalogLines(t, dir)
	wantTypes := []string{"finalized", "eligible", "finalized", "eligible", "finalized", "eligible"}
	for i, l := range lines {
		var r map[string]any
		must(t, json.Unmarshal([]byte(l), &r))
		if i >= len(wantTypes) || r["type"] != wantTypes[i] {
			t.Errorf("catalog line %d: %s", i+1, l)
		}
	}
	var fin map[string]any
	must(t, json.Unmarshal([]byte(lines[0]), &fin))
	for _, k := range []string{"id", "dataset", "path", "size", "sha256", "first", "last", "time", "ext", "at"} {
		if _, ok := fin[k]; !ok {
			t.Errorf("finalized record lacks %q: %s", k, lines[0])
		}
	}
	if fin["path"] != fa.Name || fin["time"] != "2026-03-04T05:06:07Z" {
		t.Errorf("finalized record %s", lines[0])
	}
}

func TestMoveAndCopy(t *testing.T) {
	dir := newSpool(t)
	srcDir := t.TempDir()
	moved := writeSrc(t, srcDir, "m.csv", "moved")
	copied := writeSrc(t, srcDir, "c.csv", "copied")
	fm, err := Add(bg, dir, moved, AddOptions{Dataset: "d"})
	must(t, err)
	fc, err := Add(bg, dir, copied, AddOptions{Dataset: "d", Copy: true})
	must(t, err)
	if _, err := os.Stat(moved); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a moved source is still there: %v", err)
	}
	if readText(t, copied) != "copied" {
		t.Error("a copied source changed")
	}
	if readText(t, fm.Path) != "moved" || readText(t, fc.Path) != "copied" {
		t.Error("ready files hold the wrong bytes")
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, TmpDir)); len(ents) != 0 {
		t.Errorf("tmp/ holds %v", ents)
	}
	// A moved file in ready/ has one name: it does not share its inode with anything.
	if fi, err := os.Stat(fm.Path); err != nil {
		t.Fatal(err)
	} else if id, ok := idOf(fi); ok && id.nlink != 1 {
		t.Errorf("the moved file has %d links", id.nlink)
	}
}

// TestMoveAcrossFileSystems moves a file from another file system (or, without one, with
// hard links refused): it is copied, and the source removed after the records.
func TestMoveAcrossFileSystems(t *testing.T) {
	dir := newSpool(t)
	srcDir := t.TempDir()
	if shm, err := os.MkdirTemp("/dev/shm", "spooltest-"); err == nil && sameFS(shm, dir) == false {
		t.Cleanup(func() { os.RemoveAll(shm) })
		srcDir = shm
	} else {
		if err == nil {
			os.RemoveAll(shm)
		}
		t.Log("no second file system: refusing hard links instead")
		noLinks(t)
	}
	src := writeSrc(t, srcDir, "x.parquet", "PAR1...PAR1")
	f, err := Add(bg, dir, src, AddOptions{Dataset: "d"})
	must(t, err)
	if _, err := os.Stat(src); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("source kept after a move: %v", err)
	}
	if readText(t, f.Path) != "PAR1...PAR1" || f.SHA256 != sha([]byte("PAR1...PAR1")) {
		t.Error("wrong bytes")
	}
}

func sameFS(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	if err1 != nil || err2 != nil {
		return true
	}
	ia, _ := idOf(fa)
	ib, _ := idOf(fb)
	return ia.dev == ib.dev
}

// noLinks makes every hard link fail as across file systems, for the rest of the test.
func noLinks(t *testing.T) {
	old := link
	link = func(string, string) error { return &os.LinkError{Op: "link", Err: errXDev} }
	t.Cleanup(func() { link = old })
}

func TestAddRejectsBadInput(t *testing.T) {
	dir := newSpool(t)
	srcDir := t.TempDir()
	good := writeSrc(t, srcDir, "a.csv", "x")
	for _, ds := range []string{"", "Events", "a/b", "a.b", strings.Repeat("x", 65), "é"} {
		_, err := Add(bg, dir, good, AddOptions{Dataset: ds})
		wantKind(t, err, ErrInput, "dataset")
	}
	bad := writeSrc(t, srcDir, "a.tar-v1", "x")
	_, err := Add(bg, dir, bad, AddOptions{Dataset: "d"})
	wantKind(t, err, ErrInput, bad, "extension")
	if _, err := Add(bg, dir, bad, AddOptions{Dataset: "d", Ext: "tar"}); err != nil {
		t.Errorf("an explicit extension: %v", err)
	}
	_, err = Add(bg, dir, filepath.Join(srcDir, "missing.csv"), AddOptions{Dataset: "d"})
	wantKind(t, err, store.ErrNotExist, filepath.Join(srcDir, "missing.csv"))
	_, err = Add(bg, dir, srcDir, AddOptions{Dataset: "d"})
	wantKind(t, err, ErrInput, srcDir, "not a regular file")
	ln := filepath.Join(srcDir, "ln.csv")
	must(t, os.Symlink(good, ln))
	_, err = Add(bg, dir, ln, AddOptions{Dataset: "d"})
	wantKind(t, err, ErrInput, ln, "symbolic link")
	if _, err := Add(bg, dir, ln, AddOptions{Dataset: "d", Copy: true}); err != nil {
		t.Errorf("copying through a symbolic link: %v", err)
	}
	if readText(t, good) != "x" {
		t.Error("the link's target changed")
	}
	st, err := ReadStatus(dir)
	must(t, err)
	if st.Files.Eligible.Files != 2 || st.Next != 3 {
		t.Errorf("after the refusals: %+v", st)
	}
}

func TestExtOf(t *testing.T) {
	for name, want := range map[string]string{
		"a.ndjson": "ndjson", "a.NDJSON": "ndjson", "a.ndjson.gz": "ndjson.gz", "x.gz": "gz", "noext": "bin",
		".hidden": "bin", "a.b.csv": "csv", "dir.d/file": "bin", "trailing.": "bin", "a.parquet.zst": "parquet.zst",
	} {
		if got := ExtOf(name); got != want {
			t.Errorf("ExtOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestWriter(t *testing.T) {
	dir := newSpool(t)
	w, err := Create(dir, "metrics", "ndjson")
	must(t, err)
	for range 3 {
		_, err := w.Write([]byte("{\"v\":1}\n"))
		must(t, err)
	}
	f, err := w.Commit(bg, t0, 3)
	must(t, err)
	if f.First != 1 || f.Last != 3 || f.Size != 24 || readText(t, f.Path) != strings.Repeat("{\"v\":1}\n", 3) ||
		f.SHA256 != sha([]byte(strings.Repeat("{\"v\":1}\n", 3))) {
		t.Errorf("committed %+v", f)
	}
	if _, err := w.Write([]byte("late")); !errors.Is(err, ErrState) {
		t.Errorf("write after commit: %v", err)
	}
	if _, err := w.Commit(bg, t0, 1); !errors.Is(err, ErrState) {
		t.Errorf("second commit: %v", err)
	}

	w2, err := Create(dir, "metrics", "ndjson")
	must(t, err)
	_, _ = w2.Write([]byte("dropped"))
	must(t, w2.Abort())
	if ents, _ := os.ReadDir(filepath.Join(dir, TmpDir)); len(ents) != 0 {
		t.Errorf("abort left %v", ents)
	}
	_, err = Create(dir, "metrics", "NOPE!")
	wantKind(t, err, ErrInput, "extension")
	st, err := ReadStatus(dir)
	must(t, err)
	if st.Next != 4 || st.Files.Eligible.Files != 1 {
		t.Errorf("status %+v", st)
	}
}

func TestUploadedRetainedRemove(t *testing.T) {
	dir := newSpool(t)
	f1 := add(t, dir, "d", "one", AddOptions{})
	f2 := add(t, dir, "d", "two", AddOptions{})
	s := open(t, dir, nil)

	wantKind(t, s.Remove(bg, f1.ID), ErrState, f1.Path, "eligible, not uploaded")
	if _, err := os.Stat(f1.Path); err != nil {
		t.Fatalf("Remove of a file not uploaded deleted it: %v", err)
	}
	wantKind(t, s.Remove(bg, 999), ErrState, "no file 999")
	wantKind(t, s.Uploaded(bg, 999, "k", "e", "ok"), ErrState, "no file 999")
	wantKind(t, s.Uploaded(bg, f1.ID, "", "e", "ok"), ErrInput)

	must(t, s.Uploaded(bg, f1.ID, "p/wharf/v1/x", "etag-1", "ok"))
	wantKind(t, s.Uploaded(bg, f1.ID, "p/wharf/v1/x", "etag-1", "ok"), ErrState, "uploaded, not eligible")
	if p := s.Pending(); len(p) != 1 || p[0].ID != f2.ID {
		t.Errorf("pending %+v", p)
	}
	r := s.Retained()
	if len(r) != 1 || r[0].ID != f1.ID || r[0].Key != "p/wharf/v1/x" || r[0].ETag != "etag-1" || r[0].UploadedAt.IsZero() {
		t.Fatalf("retained %+v", r)
	}
	must(t, s.Remove(bg, f1.ID))
	if _, err := os.Stat(f1.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the removed file is still there: %v", err)
	}
	wantKind(t, s.Remove(bg, f1.ID), ErrState)
	st := s.Stats()
	if st.Deleted.Files != 1 || st.Deleted.Bytes != 3 || st.Eligible.Files != 1 || st.Uploaded.Files != 0 {
		t.Errorf("stats %+v", st)
	}
	must(t, s.Close())

	// The records replay: a new owner sees the same states.
	s2 := open(t, dir, nil)
	if p := s2.Pending(); len(p) != 1 || p[0].ID != f2.ID || len(s2.Retained()) != 0 || s2.Stats() != st {
		t.Errorf("after reopening: pending %+v, stats %+v, want %+v", p, s2.Stats(), st)
	}
	lines := catalogLines(t, dir)
	if len(lines) != 6 || !strings.Contains(lines[4], `"type":"uploaded","id":1,"key":"p/wharf/v1/x","etag":"etag-1","outcome":"ok"`) ||
		!strings.Contains(lines[5], `"type":"deleted","id":1`) {
		t.Errorf("catalog %s", strings.Join(lines, "\n"))
	}
}

func TestRefreshSeesProducers(t *testing.T) {
	dir := newSpool(t)
	s := open(t, dir, nil)
	if len(s.Pending()) != 0 {
		t.Fatal("pending on an empty spool")
	}
	f := add(t, dir, "d", "late", AddOptions{})
	if len(s.Pending()) != 0 {
		t.Error("pending before Refresh")
	}
	must(t, s.Refresh(bg))
	if p := s.Pending(); len(p) != 1 || p[0].ID != f.ID {
		t.Errorf("pending after Refresh %+v", p)
	}
	// The owner's own records and a producer's interleave; each is applied once.
	must(t, s.Uploaded(bg, f.ID, "k1", "", "conflict_equal"))
	g := add(t, dir, "d", "later", AddOptions{})
	must(t, s.Uploaded(bg, g.ID, "k2", "e", "ok")) // reads g's records first
	must(t, s.Refresh(bg))
	if st := s.Stats(); st.Uploaded.Files != 2 || st.Eligible.Files != 0 {
		t.Errorf("stats %+v", st)
	}
	must(t, s.Close())
	wantKind(t, s.Refresh(bg), ErrState, "closed")
}

func TestMissingReadyFileRefused(t *testing.T) {
	dir := newSpool(t)
	f := add(t, dir, "d", "data", AddOptions{})
	must(t, os.Remove(f.Path))
	_, err := Open(dir, OpenOptions{})
	wantKind(t, err, ErrCorrupt, f.Path, "missing")

	must(t, os.WriteFile(f.Path, []byte("other size"), 0o644))
	_, err = Open(dir, OpenOptions{})
	wantKind(t, err, ErrCorrupt, f.Path, "10 bytes", "records 4")

	// A retained file that is gone is no error: it was uploaded.
	must(t, os.WriteFile(f.Path, []byte("data"), 0o644))
	s := open(t, dir, nil)
	must(t, s.Uploaded(bg, f.ID, "k", "e", "ok"))
	must(t, s.Close())
	must(t, os.Remove(f.Path))
	s = open(t, dir, nil)
	must(t, s.Remove(bg, f.ID))
}

func TestOwnerLockInProcess(t *testing.T) {
	dir := newSpool(t)
	s := open(t, dir, nil)
	_, err := Open(dir, OpenOptions{})
	wantKind(t, err, ErrLocked, filepath.Join(dir, LockFile), "PID "+itoa(os.Getpid()))
	st, err := ReadStatus(dir)
	must(t, err)
	if !st.Owner.Held || st.Owner.PID != os.Getpid() {
		t.Errorf("status owner %+v", st.Owner)
	}
	must(t, s.Close())
	st, err = ReadStatus(dir)
	must(t, err)
	if st.Owner.Held || strings.TrimSpace(readText(t, filepath.Join(dir, LockFile))) != "" {
		t.Errorf("after Close: owner %+v, lock file %q", st.Owner, readText(t, filepath.Join(dir, LockFile)))
	}
	open(t, dir, nil)
}

func TestOpenCleansUp(t *testing.T) {
	dir := newSpool(t)
	f := add(t, dir, "d", "kept", AddOptions{})
	orphan := filepath.Join(dir, ReadyDir, "d", "00000000000000000002_00000000000000000002.csv")
	stray := filepath.Join(dir, ReadyDir, "d", "notes.txt")
	abandoned := filepath.Join(dir, TmpDir, "d-1-abc.csv")
	for _, p := range []string{orphan, stray, abandoned} {
		must(t, os.WriteFile(p, []byte("x"), 0o644))
	}
	// A live Writer's temporary file is locked: it stays.
	w, err := Create(dir, "d", "csv")
	must(t, err)
	defer w.Abort()
	var logs logBuf
	s := open(t, dir, logs.logger())
	for p, gone := range map[string]bool{orphan: true, abandoned: true, stray: false, f.Path: false, w.st.path: false} {
		_, err := os.Stat(p)
		if gone != errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: exists %v, want removed %v", p, err == nil, gone)
		}
	}
	for _, p := range []string{orphan, abandoned, stray} {
		if !strings.Contains(logs.String(), p) {
			t.Errorf("no warning names %s:\n%s", p, logs.String())
		}
	}
	if len(s.Pending()) != 1 {
		t.Error("clean-up touched a recorded file")
	}
}

func TestStatus(t *testing.T) {
	dir := newSpool(t)
	st, err := ReadStatus(dir)
	must(t, err)
	if st.Next != 1 || st.Oldest != nil || st.Owner.Held || st.Records != 0 || st.Dir != dir || len(st.Epoch) != 16 {
		t.Errorf("empty spool: %+v", st)
	}
	f := add(t, dir, "d", "abc", AddOptions{Records: 5})
	add(t, dir, "d", "defg", AddOptions{})
	time.Sleep(10 * time.Millisecond)
	st, err = ReadStatus(dir)
	must(t, err)
	if st.Next != 7 || st.Oldest == nil || st.Oldest.ID != f.ID || st.OldestAge < 10*time.Millisecond ||
		st.Files.Eligible != (Count{Files: 2, Bytes: 7}) || st.Records != 4 {
		t.Errorf("status %+v", st)
	}
	b, err := json.Marshal(st)
	must(t, err)
	for _, k := range []string{`"epoch":"` + st.Epoch, `"next_sequence":7`, `"oldest_pending":{`, `"state":"eligible"`, `"owner":{"held":false`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("status JSON lacks %s: %s", k, b)
		}
	}
}

func TestStateNames(t *testing.T) {
	var names []string
	for _, s := range States {
		b, _ := s.MarshalText()
		var back State
		must(t, back.UnmarshalText(b))
		if back != s {
			t.Errorf("%s does not round-trip", s)
		}
		names = append(names, s.String())
	}
	if !slices.Equal(names, []string{"finalized", "eligible", "uploaded", "deleted"}) {
		t.Errorf("names %v", names)
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	return string(b)
}

// AddAll checks every file before it adds the first, and reports each file it spooled.
func TestAddAllChecksEveryFileFirst(t *testing.T) {
	dir := newSpool(t)
	srcDir := t.TempDir()
	a, b := writeSrc(t, srcDir, "a.csv", "a"), writeSrc(t, srcDir, "b.csv", "b")
	missing := filepath.Join(srcDir, "missing.csv")
	var added []string
	each := func(f File, src string) error { added = append(added, src+" "+f.Name); return nil }
	err := AddAll(bg, dir, []string{a, missing}, AddOptions{Dataset: "d"}, each)
	wantKind(t, err, store.ErrNotExist, missing)
	if len(added) != 0 || readText(t, a) != "a" {
		t.Fatalf("a refused batch spooled %v", added)
	}
	must(t, AddAll(bg, dir, []string{a, b}, AddOptions{Dataset: "d"}, each))
	if len(added) != 2 || !strings.HasPrefix(added[0], a+" ") || !strings.HasPrefix(added[1], b+" ") {
		t.Errorf("added %v, want a then b", added)
	}
	stop := errors.New("stop")
	c := writeSrc(t, srcDir, "c.csv", "c")
	d := writeSrc(t, srcDir, "d.csv", "d")
	if err := AddAll(bg, dir, []string{c, d}, AddOptions{Dataset: "d"}, func(File, string) error { return stop }); err != stop {
		t.Errorf("an error of added: AddAll = %v", err)
	}
	if _, err := os.Stat(d); err != nil {
		t.Errorf("the file after the one added stopped at was taken: %v", err)
	}
}
