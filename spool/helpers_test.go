package spool

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wharfdata/wharf/errcode"
)

var bg = context.Background()

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// newSpool makes a spool in a fresh directory and returns its path.
func newSpool(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "spool")
	if _, err := Init(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeSrc writes a source file and returns its path.
func writeSrc(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func fileSHA(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	return sha(b)
}

// wantKind fails unless err is of kind and its message holds every one of parts.
func wantKind(t *testing.T, err error, kind *errcode.Code, parts ...string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error %v (code %s), want %s", err, errcode.NameOf(err), kind.Code())
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not name %q", err, p)
		}
	}
}

// logBuf is a logger writing text into a buffer, safe for concurrent use.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuf) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// open opens dir as its owner and closes it at the end of the test.
func open(t *testing.T, dir string, log *slog.Logger) *Spool {
	t.Helper()
	s, err := Open(dir, OpenOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// catalogLines returns the catalog's lines.
func catalogLines(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, CatalogFile))
	must(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func writeCatalog(t *testing.T, dir, content string) {
	t.Helper()
	must(t, os.WriteFile(filepath.Join(dir, CatalogFile), []byte(content), 0o644))
}

// add spools content as a new source file and returns the file.
func add(t *testing.T, dir, dataset, content string, opts AddOptions) File {
	t.Helper()
	src := writeSrc(t, t.TempDir(), "f.ndjson", content)
	opts.Dataset = dataset
	f, err := Add(bg, dir, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

var errXDev error = syscall.EXDEV

func itoa(n int) string { return strconv.Itoa(n) }
