package atomicfile

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

func TestWriteIsWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "a.txt")
	if n, err := Write(t.Context(), path, strings.NewReader("hello"), false); err != nil || n != 5 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "hello" {
		t.Fatalf("content %q", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm()&0o044 == 0 {
		t.Errorf("mode %v: not readable as os.Create would make it", fi.Mode())
	}
	// A failing source leaves the old file and no temporary file.
	boom := errors.New("boom")
	_, err := Write(t.Context(), path, &failing{after: 3, err: boom}, false)
	if !errors.Is(err, boom) {
		t.Fatalf("failing source: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "hello" {
		t.Errorf("a failed write changed the file: %q", b)
	}
	if got := entries(t, filepath.Join(dir, "sub")); len(got) != 1 {
		t.Errorf("left behind: %q", got)
	}
	// A cancelled write too.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Write(ctx, filepath.Join(dir, "sub", "b.txt"), strings.NewReader("x"), false); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if got := entries(t, filepath.Join(dir, "sub")); len(got) != 1 {
		t.Errorf("left behind after a cancel: %q", got)
	}
}

func TestExclusiveNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a")
	if _, err := Write(t.Context(), path, strings.NewReader("first"), true); err != nil {
		t.Fatal(err)
	}
	_, err := Write(t.Context(), path, strings.NewReader("second"), true)
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), path) {
		t.Fatalf("second exclusive write: %v, want ErrExist naming the path", err)
	}
	// The race the pre-check cannot see: the name appears between Create and Place.
	f, err := Create(filepath.Join(dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if err := os.WriteFile(filepath.Join(dir, "b"), []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Place(true); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Place(exclusive) over a name made meanwhile: %v", err)
	}
	f.Abort()
	if b, _ := os.ReadFile(filepath.Join(dir, "b")); string(b) != "theirs" {
		t.Errorf("replaced: %q", b)
	}
	if got := entries(t, dir); len(got) != 2 {
		t.Errorf("left behind: %q", got)
	}
}

// TestOnRoot: through an *os.Root, names stay inside it.
func TestOnRoot(t *testing.T) {
	dir := t.TempDir()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := New(r, "tmp", "k")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if _, err := f.Write([]byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "k")); string(b) != "v" {
		t.Errorf("content %q", b)
	}
	if _, err := New(r, "..", "k"); err == nil {
		t.Error("a temporary file outside the root was made")
	}
}

func TestCopyTellsWriteFromRead(t *testing.T) {
	boom := errors.New("disk full")
	_, err := Copy(t.Context(), failWriter{boom}, strings.NewReader("x"))
	var we *WriteError
	if !errors.As(err, &we) || !errors.Is(err, boom) {
		t.Errorf("a failing writer: %v, want a *WriteError", err)
	}
	var b bytes.Buffer
	if n, err := Copy(t.Context(), &b, strings.NewReader(strings.Repeat("z", 200000))); err != nil || n != 200000 || b.Len() != 200000 {
		t.Errorf("copy of 200000 bytes: %d, %v", n, err)
	}
}

type failing struct {
	after int
	err   error
}

func (f *failing) Read(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, f.err
	}
	n := min(len(p), f.after)
	f.after -= n
	return n, nil
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }
