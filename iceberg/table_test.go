package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/wharfdata/wharf/store"
)

// A table is created, appended to, overwritten and loaded on every store, and iceberg-go's
// own scan reads back the rows written.
func TestCreateAppendOverwriteLoad(t *testing.T) {
	forEachStore(t, func(t *testing.T, url string, cfg *store.Config) {
		ctx := context.Background()
		st := openStore(t, url, cfg)
		tbl, err := Create(ctx, st, testSchema(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if tbl.Version() != 1 || tbl.CurrentSnapshot() != nil {
			t.Fatalf("new table: version %d, snapshot %v", tbl.Version(), tbl.CurrentSnapshot())
		}
		if got := tbl.Metadata().Properties()[table.DefaultNameMappingKey]; !strings.Contains(got, `"id"`) {
			t.Fatalf("name mapping %q", got)
		}
		if _, err := Create(ctx, st, testSchema(), nil); !errors.Is(err, ErrTableExists) {
			t.Fatalf("second create: %v, want ErrTableExists", err)
		}

		a := writeParquet(t, st, "data/a.parquet", 0, 3)
		b := writeParquet(t, st, "data/b.parquet", 3, 4)
		if err := tbl.Append(ctx, []string{a, tbl.Location() + "/" + b}); err != nil {
			t.Fatal(err)
		}
		c := writeParquet(t, st, "data/c.parquet", 7, 2)
		if err := tbl.Append(ctx, []string{c}); err != nil {
			t.Fatal(err)
		}
		checkRows(t, scan(t, tbl), ids(0, 9))
		if err := tbl.Append(ctx, []string{c}); err == nil {
			t.Fatal("appending a file the table has: no error")
		}

		d := writeParquet(t, st, "data/d.parquet", 100, 5)
		if err := tbl.Overwrite(ctx, []string{d}); err != nil {
			t.Fatal(err)
		}
		checkRows(t, scan(t, tbl), ids(100, 5))

		got, err := Load(ctx, openStore(t, url, cfg), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version() != 4 {
			t.Errorf("loaded version %d, want 4", got.Version())
		}
		checkRows(t, scan(t, got), ids(100, 5))
		var ops []table.Operation
		for _, s := range got.Snapshots() {
			ops = append(ops, s.Summary.Operation)
		}
		if want := []table.Operation{table.OpAppend, table.OpAppend, table.OpOverwrite}; !equalOps(ops, want) {
			t.Errorf("operations %v, want %v", ops, want)
		}
		files, err := got.DataFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 1 || files[0].FilePath() != got.Location()+"/"+d || files[0].Count() != 5 {
			t.Errorf("data files %v", files)
		}
		if got.Schema().NumFields() != 3 {
			t.Errorf("schema %v", got.Schema())
		}
		hint, err := got.FileIO().WithContext(ctx).ReadFile(got.Location() + "/" + hintKey)
		if err != nil || string(hint) != "4" {
			t.Errorf("version hint %q, %v", hint, err)
		}
	})
}

func equalOps(a, b []table.Operation) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Overwrite on a table without data is an append; the same files again commit nothing.
func TestOverwriteEdges(t *testing.T) {
	ctx := context.Background()
	st, tbl := newFolderTable(t)
	a := writeParquet(t, st, "data/a.parquet", 0, 2)
	if err := tbl.Overwrite(ctx, []string{a}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Overwrite(ctx, []string{a}); err != nil {
		t.Fatal(err)
	}
	if n := len(tbl.Snapshots()); n != 1 || tbl.Version() != 2 {
		t.Fatalf("%d snapshots at version %d, want 1 at 2", n, tbl.Version())
	}
	checkRows(t, scan(t, tbl), ids(0, 2))
}

// Loading finds the current version from a stale hint, from no hint, and from a hint that
// names a version that was never written; where there is no table it says so.
func TestLoadFindsCurrentVersion(t *testing.T) {
	ctx := context.Background()
	url, cfg := harnesses[0].open(t)
	st := openStore(t, url, cfg)
	if _, err := Load(ctx, st, nil); !errors.Is(err, ErrNoTable) {
		t.Fatalf("load of nothing: %v, want ErrNoTable", err)
	}
	tbl, err := Create(ctx, st, testSchema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := tbl.Append(ctx, []string{writeParquet(t, st, "data/"+string(rune('a'+i))+".parquet", int64(i), 1)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, hint := range []string{"1", "", "junk", "9"} {
		if hint == "" {
			if err := st.Delete(ctx, hintKey, nil); err != nil {
				t.Fatal(err)
			}
		} else if _, err := st.Put(ctx, hintKey, strings.NewReader(hint), nil); err != nil {
			t.Fatal(err)
		}
		got, err := Load(ctx, st, nil)
		if err != nil {
			t.Fatalf("hint %q: %v", hint, err)
		}
		if got.Version() != 4 {
			t.Errorf("hint %q: version %d, want 4", hint, got.Version())
		}
	}
}

// A writer that loads from the hint (Options.FromHint) takes a lagging hint's version as it
// is, and its commit still lands on top of the current version: the create-if-absent of the
// next version is refused, the retry reads the table as Load does, and nothing is lost. A
// hint naming a version that was never written is searched past.
func TestLoadFromHint(t *testing.T) {
	ctx := context.Background()
	st, tbl := newFolderTable(t)
	var files []string
	for i := range 3 {
		files = append(files, writeParquet(t, st, fmt.Sprintf("data/%d.parquet", i), int64(i), 1))
		if err := tbl.Append(ctx, files[i:]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Put(ctx, hintKey, strings.NewReader("2"), nil); err != nil {
		t.Fatal(err)
	}
	w, err := Load(ctx, st, &Options{FromHint: true})
	if err != nil {
		t.Fatal(err)
	}
	if w.Version() != 2 {
		t.Fatalf("from a hint of 2 the writer holds version %d, want 2 (it read past the hint)", w.Version())
	}
	files = append(files, writeParquet(t, st, "data/3.parquet", 3, 1))
	if err := w.Append(ctx, files[3:]); err != nil {
		t.Fatal(err)
	}
	if w.Version() != 5 {
		t.Errorf("the commit made version %d, want 5", w.Version())
	}
	got, err := Load(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, scan(t, got), ids(0, 4))
	want, err := got.locations(files)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkHistoryOf(ctx, got, 4, want); err != nil {
		t.Error(err)
	}

	if _, err := st.Put(ctx, hintKey, strings.NewReader("9"), nil); err != nil {
		t.Fatal(err)
	}
	if w, err = Load(ctx, st, &Options{FromHint: true}); err != nil || w.Version() != 5 {
		t.Fatalf("from a hint of a version never written: version %d, %v; want 5", w.Version(), err)
	}
}

// The file IO maps locations to keys, refuses others by name, reads by range and reports a
// missing file as fs.ErrNotExist.
func TestFileIO(t *testing.T) {
	ctx := context.Background()
	url, cfg := harnesses[0].open(t)
	st := openStore(t, url, cfg)
	loc := strings.TrimRight(st.Describe().Location, "/")
	fio := NewFileIO(st, loc).WithContext(ctx)
	if _, err := fio.Open("mem://elsewhere/x"); !errors.Is(err, ErrOutsideTable) || !strings.Contains(err.Error(), "mem://elsewhere/x") {
		t.Fatalf("open outside: %v", err)
	}
	if _, err := fio.Open(loc + "/missing"); !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("open missing: %v", err)
	}
	big := make([]byte, wholeFile+100)
	for i := range big {
		big[i] = byte(i * 7)
	}
	for _, body := range [][]byte{[]byte("0123456789"), big} {
		if err := fio.WriteFile(loc+"/f", body); err != nil {
			t.Fatal(err)
		}
		f, err := fio.Open(loc + "/f")
		if err != nil {
			t.Fatal(err)
		}
		p := make([]byte, 4)
		if n, err := f.ReadAt(p, int64(len(body))-2); n != 2 || err != io.EOF || string(p[:2]) != string(body[len(body)-2:]) {
			t.Errorf("ReadAt at the end: %d %v", n, err)
		}
		if _, err := f.Seek(3, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		rest, err := io.ReadAll(f)
		if err != nil || string(rest) != string(body[3:]) {
			t.Errorf("read after seek: %d bytes, %v", len(rest), err)
		}
		if fi, err := f.Stat(); err != nil || fi.Size() != int64(len(body)) {
			t.Errorf("stat: %v %v", fi, err)
		}
		f.Close()
	}
	w, err := fio.Create(loc + "/g")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.ReadFrom(strings.NewReader("written")); err != nil {
		t.Fatal(err)
	}
	if _, err := fio.Stat(loc + "/g"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("file exists before Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := fio.ReadFile(loc + "/g"); err != nil || string(b) != "written" {
		t.Errorf("read back %q, %v", b, err)
	}
	if err := fio.Remove(loc + "/g"); err != nil {
		t.Fatal(err)
	}
	if _, err := fio.Stat(loc + "/g"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat after remove: %v", err)
	}
}
