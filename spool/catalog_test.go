package spool

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/errcode"
)

// twoFiles spools two files and returns the spool and the catalog's content.
func twoFiles(t *testing.T) (string, string) {
	dir := newSpool(t)
	add(t, dir, "d", "one", AddOptions{})
	add(t, dir, "d", "two", AddOptions{})
	return dir, readText(t, filepath.Join(dir, CatalogFile))
}

func TestTornLastLineTolerated(t *testing.T) {
	for name, tail := range map[string]string{
		"no newline":          `{"type":"finalized","id":3,"dataset":"d","pa`,
		"zeros":               "\x00\x00\x00\x00",
		"invalid JSON, ended": "{\"type\":\"elig\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir, cat := twoFiles(t)
			catPath := filepath.Join(dir, CatalogFile)
			writeCatalog(t, dir, cat+tail)

			st, err := ReadStatus(dir)
			must(t, err)
			if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], catPath+" line 5") {
				t.Errorf("status warnings %q", st.Warnings)
			}
			if readText(t, catPath) != cat+tail {
				t.Error("status changed the catalog")
			}

			var logs logBuf
			s := open(t, dir, logs.logger())
			if !strings.Contains(logs.String(), catPath+" line 5") || !strings.Contains(logs.String(), "torn") {
				t.Errorf("no warning names the path and line:\n%s", logs.String())
			}
			if len(s.Pending()) != 2 {
				t.Errorf("pending %d", len(s.Pending()))
			}
			// The next append cuts the torn line away first.
			must(t, s.Uploaded(bg, 1, "k", "e", "ok"))
			lines := catalogLines(t, dir)
			if len(lines) != 5 || !strings.HasPrefix(lines[4], `{"type":"uploaded","id":1,`) {
				t.Errorf("catalog after the append:\n%s", strings.Join(lines, "\n"))
			}
			must(t, s.Close())
			open(t, dir, nil)
		})
	}
}

func TestTornLastLineCutByAdder(t *testing.T) {
	dir, cat := twoFiles(t)
	writeCatalog(t, dir, cat+`{"type":"finalized","id":3,"data`)
	var logs logBuf
	f := add(t, dir, "d", "three", AddOptions{Logger: logs.logger()})
	if f.First != 3 {
		t.Errorf("first %d, want 3", f.First)
	}
	if !strings.Contains(logs.String(), filepath.Join(dir, CatalogFile)) {
		t.Errorf("the adder did not warn about the torn line:\n%s", logs.String())
	}
	if lines := catalogLines(t, dir); len(lines) != 6 {
		t.Errorf("catalog has %d lines:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	open(t, dir, nil)
}

func TestCorruptCatalogRefused(t *testing.T) {
	dir, cat := twoFiles(t)
	lines := strings.SplitAfter(cat, "\n")
	fin3 := func(first, last uint64) string {
		return fmt.Sprintf(`{"type":"finalized","id":%d,"dataset":"d","path":"%s","size":1,"sha256":"%s","first":%d,"last":%d,"time":"2026-01-01T00:00:00Z","ext":"csv","at":"2026-01-01T00:00:00Z"}`+"\n",
			first, readyName("d", first, last, "csv"), strings.Repeat("a", 64), first, last)
	}
	cases := map[string]struct {
		content string
		line    int
		says    string
	}{
		"torn middle line":         {lines[0] + "{\"type\":\"elig\n" + strings.Join(lines[2:], ""), 2, "not a JSON object"},
		"empty middle line":        {lines[0] + "\n" + strings.Join(lines[1:], ""), 2, "not a JSON object"},
		"unknown type":             {cat + `{"type":"shipped","id":1,"at":"2026-01-01T00:00:00Z"}` + "\n", 5, `unknown record type "shipped"`},
		"unknown id":               {cat + `{"type":"eligible","id":7,"at":"2026-01-01T00:00:00Z"}` + "\n", 5, "id 7: no such file"},
		"uploaded before eligible": {lines[0] + `{"type":"uploaded","id":1,"key":"k","etag":"","outcome":"ok","at":"2026-01-01T00:00:00Z"}` + "\n", 2, "finalized (want eligible)"},
		"deleted before uploaded":  {cat + `{"type":"deleted","id":1,"at":"2026-01-01T00:00:00Z"}` + "\n", 5, "eligible (want uploaded)"},
		"twice eligible":           {cat + lines[1], 5, "eligible (want finalized)"},
		"sequence gap":             {cat + fin3(5, 5), 5, "first sequence 5, want 3"},
		"overlap":                  {cat + fin3(2, 4), 5, "first sequence 2, want 3"},
		"bad sha":                  {cat + strings.Replace(fin3(3, 3), strings.Repeat("a", 64), "xyz", 1), 5, "sha256"},
		"wrong path":               {cat + strings.Replace(fin3(3, 3), "ready/d/", "ready/e/", 1), 5, "path"},
		"size not a number":        {cat + strings.Replace(fin3(3, 3), `"size":1`, `"size":"1"`, 1), 5, "size"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			writeCatalog(t, dir, c.content)
			path := filepath.Join(dir, CatalogFile)
			where := fmt.Sprintf("%s line %d", path, c.line)
			_, err := Open(dir, OpenOptions{})
			wantKind(t, err, ErrCorrupt, where, c.says)
			_, err = ReadStatus(dir)
			wantKind(t, err, ErrCorrupt, where)
			if errcode.NameOf(err) != "WHARF_SPOOL_CORRUPT" {
				t.Errorf("code %s", errcode.NameOf(err))
			}
			if readText(t, path) != c.content {
				t.Error("a refused open changed the catalog")
			}
		})
	}
}

func TestFinalizedOnlyMadeEligible(t *testing.T) {
	dir, cat := twoFiles(t)
	lines := strings.SplitAfter(cat, "\n")
	// The second add stopped after its finalized record.
	writeCatalog(t, dir, strings.Join(lines[:3], ""))
	st, err := ReadStatus(dir)
	must(t, err)
	if st.Files.Finalized.Files != 1 || st.Files.Eligible.Files != 1 {
		t.Errorf("status %+v", st.Files)
	}
	var logs logBuf
	s := open(t, dir, logs.logger())
	if p := s.Pending(); len(p) != 2 || p[1].ID != 2 {
		t.Errorf("pending %+v", p)
	}
	if got := catalogLines(t, dir); len(got) != 4 || !strings.HasPrefix(got[3], `{"type":"eligible","id":2,`) {
		t.Errorf("catalog %q", got)
	}
	if !strings.Contains(logs.String(), "making eligible") {
		t.Errorf("logs %s", logs.String())
	}
}
