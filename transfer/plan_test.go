package transfer

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/file"
)

// TestPlanTreeFileDirClash: a tree copied to local disk cannot hold both "a" and "a/b": the
// file that another needs as a directory is passed over, named to Skipped, and the rest is
// copied.
func TestPlanTreeFileDirClash(t *testing.T) {
	ctx := context.Background()
	src, err := store.Open(ctx, "mem://plan-clash", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, k := range []string{"in/a", "in/a/b", "in/c"} {
		put(t, src, k, k)
	}
	dst := t.TempDir()
	var skipped []string
	o := CopyOptions{Recursive: true, Skipped: func(name string, err error) {
		if !errors.Is(err, store.ErrKeyInvalid) {
			t.Errorf("skipped %s: %v, want ErrKeyInvalid", name, err)
		}
		skipped = append(skipped, name)
	}}
	p, err := PlanCopy(ctx, testStores, "mem://plan-clash/in", dst, o)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var dsts []string
	for _, tk := range p.Tasks {
		dsts = append(dsts, tk.Dst)
	}
	if !slices.Equal(dsts, []string{"a/b", "c"}) || p.Passed != 1 || !slices.Equal(skipped, []string{"mem://plan-clash/in/a"}) {
		t.Fatalf("tasks to %q, passed %d, skipped %q; want [a/b c], 1, [mem://plan-clash/in/a]", dsts, p.Passed, skipped)
	}
	if _, d := p.Names(p.Tasks[0]); d != filepath.Join(dst, "a", "b") {
		t.Errorf("destination named %q", d)
	}
	sum, err := p.Run(ctx, nil)
	if err != nil || sum.Files != 2 || sum.Copied != nil {
		t.Fatalf("Run = %+v, %v", sum, err)
	}
	if got := readString(t, filepath.Join(dst, "a", "b")); got != "in/a/b" {
		t.Errorf("a/b holds %q", got)
	}
}

// TestPlanParsesEachEndOnce: each end is parsed once, whatever the plan asks of it (is it a
// local path, a directory, an object), so a local path's store is looked for once.
func TestPlanParsesEachEndOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("x,y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, o := range []CopyOptions{{}, {NoFsync: true}, {Recursive: true}, {DryRun: true}} {
		looked := 0
		st := testStores
		st.IsStore = func(d string) bool { looked++; return file.IsStore(d) }
		src := filepath.Join(dir, "a.csv")
		if o.Recursive {
			src = dir
		}
		p, err := PlanCopy(context.Background(), st, src, out+"/", o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		p.Close()
		if looked != 2 {
			t.Errorf("%+v: a file store looked for %d times, want once for each end", o, looked)
		}
	}
}

func TestPlanCopyOne(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(src, []byte("x,y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := PlanCopy(ctx, testStores, src, "mem://plan-one/in/", CopyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if len(p.Tasks) != 1 || p.Tasks[0].Dst != "in/a.csv" || p.Tasks[0].Size != 4 || p.Stream() {
		t.Fatalf("tasks %+v", p.Tasks)
	}
	sum, err := p.Run(ctx, nil)
	want := Copied{Source: src, Destination: "mem://plan-one/in/a.csv", Size: 4}
	if err != nil || sum.Copied == nil || *sum.Copied != want {
		t.Fatalf("Run = %+v %+v, %v; want %+v", sum, sum.Copied, err, want)
	}
}

func TestPlanCopyStream(t *testing.T) {
	ctx := context.Background()
	dst := filepath.Join(t.TempDir(), "in.txt")
	o := CopyOptions{Stdin: strings.NewReader("streamed\n")}
	p, err := PlanCopy(ctx, testStores, "-", dst, o)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sum, err := p.Run(ctx, nil)
	if err != nil || !p.Stream() || sum.Copied == nil || sum.Copied.Size != 9 || sum.Copied.Source != "-" {
		t.Fatalf("Run = %+v %+v, %v", sum, sum.Copied, err)
	}
	var out bytes.Buffer
	p, err = PlanCopy(ctx, testStores, dst, "-", CopyOptions{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if sum, err := p.Run(ctx, nil); err != nil || sum.Copied != nil || out.String() != "streamed\n" {
		t.Errorf("to standard output: %+v, %v, %q", sum, err, out.String())
	}
}

// TestPlanCopyUsage: a copy asked for wrongly is a UsageError, and opens nothing.
func TestPlanCopyUsage(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		src, dst string
		o        CopyOptions
		msg      string
	}{
		{dir, t.TempDir(), CopyOptions{}, "use -r"},
		{f, t.TempDir(), CopyOptions{Recursive: true}, "drop -r"},
		{dir, f, CopyOptions{Recursive: true}, "is a file, not a directory"},
		{"-", "mem://m/in/", CopyOptions{}, "give the full destination name"},
		{"-", f, CopyOptions{Recursive: true}, "carries only one"},
		{f, "-", CopyOptions{Options: Options{IfAbsent: true}}, "--if-absent has no meaning"},
		{f, "mem://m/k", CopyOptions{NoFsync: true}, "--no-fsync is for copies to a local path"},
		{"-", f, CopyOptions{NoFsync: true}, "a copy of standard input is always fsynced"},
	} {
		_, err := PlanCopy(context.Background(), testStores, c.src, c.dst, c.o)
		var u *UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("cp %s %s %+v: %v, want a usage error saying %q", c.src, c.dst, c.o, err, c.msg)
		}
	}
}
