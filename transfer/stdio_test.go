package transfer

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "out.txt")
	n, err := writeFileAtomic(context.Background(), path, strings.NewReader("hello"), false)
	if err != nil || n != 5 {
		t.Fatalf("writeFileAtomic = %d, %v", n, err)
	}
	if got := readString(t, path); got != "hello" {
		t.Errorf("content %q", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	if got := names(t, filepath.Join(dir, "sub")); len(got) != 1 {
		t.Errorf("directory holds %q: a temporary file was left", got)
	}
}

// failingReader yields some bytes, then fails.
type failingReader struct{ sent bool }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.sent {
		return 0, errors.New("connection reset")
	}
	r.sent = true
	return copy(p, "partial"), nil
}

func TestWriteFileAtomicLeavesNothingOnFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(path, []byte("previous"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := writeFileAtomic(context.Background(), path, &failingReader{}, false); err == nil {
		t.Fatal("a failing body succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := writeFileAtomic(ctx, path, strings.NewReader("new"), false); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled write: %v", err)
	}
	if got := readString(t, path); got != "previous" {
		t.Errorf("the file was replaced by a failed write: %q", got)
	}
	if got := names(t, dir); len(got) != 1 {
		t.Errorf("directory holds %q: a temporary file was left", got)
	}
}

func TestWriteFileAtomicIfAbsent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if _, err := writeFileAtomic(context.Background(), path, strings.NewReader("first"), true); err != nil {
		t.Fatal(err)
	}
	_, err := writeFileAtomic(context.Background(), path, strings.NewReader("second"), true)
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("second --if-absent write: %v, want ErrPreconditionFailed", err)
	}
	if got := readString(t, path); got != "first" {
		t.Errorf("content %q", got)
	}
	if got := names(t, dir); len(got) != 1 {
		t.Errorf("directory holds %q", got)
	}
}

func TestCancelableUnblocksABlockedRead(t *testing.T) {
	pr, pw := io.Pipe() // never written: a Read on pr blocks for ever
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r := cancelable(ctx, pr)
	done := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Read = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read still blocked after cancel")
	}
}

func TestLocalErr(t *testing.T) {
	_, err := os.Open(filepath.Join(t.TempDir(), "missing.csv"))
	got := LocalError("open", "missing.csv", err)
	if !errors.Is(got, store.ErrNotExist) || !strings.Contains(got.Error(), `"missing.csv"`) {
		t.Errorf("localErr = %v", got)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range des {
		out = append(out, d.Name())
	}
	return out
}
