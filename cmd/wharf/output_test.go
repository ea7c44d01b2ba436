package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
)

func TestLsLines(t *testing.T) {
	mod := time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	got := lsLine(store.ObjectInfo{Key: "a/b.csv", Size: 1234, LastModified: mod}, "b.csv", false)
	if want := "2024-01-02 02:04:05       1234 b.csv"; got != want {
		t.Errorf("lsLine = %q, want %q", got, want)
	}
	big := store.ObjectInfo{Key: "a/big", Size: 5 << 20, LastModified: mod}
	if got, want := lsLine(big, "big", true), "2024-01-02 02:04:05    5.0 MiB big"; got != want {
		t.Errorf("lsLine -H = %q, want %q", got, want)
	}
	if got, want := lsPrefixLine("sub/"), strings.Repeat(" ", 19)+"        PRE sub/"; got != want {
		t.Errorf("lsPrefixLine = %q, want %q", got, want)
	}
}

func TestWritePageJSONIsNDJSON(t *testing.T) {
	a := &app{format: "json"}
	var b bytes.Buffer
	page := store.Page{Prefixes: []string{"logs/sub/"}, Objects: []store.ObjectInfo{{Key: "logs/a", Size: 3, ETag: "e1"}}}
	if err := a.writePage(&b, page, "logs/", false); err != nil {
		t.Fatal(err)
	}
	want := `{"prefix":"logs/sub/"}` + "\n" + `{"key":"logs/a","size":3,"etag":"e1"}` + "\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestWritePagePrettyTrimsBase(t *testing.T) {
	a := &app{format: "pretty"}
	var b bytes.Buffer
	page := store.Page{Prefixes: []string{"logs/sub/"}, Objects: []store.ObjectInfo{{Key: "logs/a", Size: 3}}}
	if err := a.writePage(&b, page, "logs/", false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "PRE sub/") || !strings.HasSuffix(lines[1], " 3 a") {
		t.Errorf("got %q", b.String())
	}
}

func TestWriteStat(t *testing.T) {
	var b bytes.Buffer
	info := store.ObjectInfo{Key: "k", Size: 2048, ETag: "abc", ContentType: "text/csv",
		LastModified: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC), Metadata: map[string]string{"z-last": "2", "a-first": "1"}}
	if err := writeStat(&b, "s3://b/k", info); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"url:           s3://b/k\n", "size:          2048 (2.0 KiB)\n", "etag:          abc\n",
		"last-modified: 2024-05-06 07:08:09 UTC\n", "content-type:  text/csv\n", "metadata:\n  a-first: 1\n  z-last: 2\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("stat output lacks %q:\n%s", want, b.String())
		}
	}
	if !strings.Contains(b.String(), "headers:       -\n") {
		t.Errorf("no headers not shown as '-':\n%s", b.String())
	}
	b.Reset()
	info.Headers = store.Headers{ContentEncoding: "gzip", CacheControl: "no-store"}
	_ = writeStat(&b, "s3://b/k", info)
	if want := "headers:\n  Cache-Control: no-store\n  Content-Encoding: gzip\nmetadata:\n"; !strings.Contains(b.String(), want) {
		t.Errorf("stat output lacks %q:\n%s", want, b.String())
	}
	b.Reset()
	_ = writeStat(&b, "x", store.ObjectInfo{Key: "k"})
	if !strings.Contains(b.String(), "last-modified: -\n") || !strings.Contains(b.String(), "metadata:      -\n") {
		t.Errorf("empty fields not shown as '-':\n%s", b.String())
	}
}

func TestProbeNamesALocalStoreAsTyped(t *testing.T) {
	for _, c := range []struct{ raw, loc, want string }{
		{"./examples/data", "file:///home/me/wharf/examples/data", "./examples/data"},
		{"file:///srv/x", "file:///srv/x", "file:///srv/x"},
		{"s3://b/p", "s3://b/p", "s3://b/p"},
		{"-", "stdout", "stdout"},
	} {
		if got := asTyped(c.raw, c.loc); got != c.want {
			t.Errorf("asTyped(%q, %q) = %q, want %q", c.raw, c.loc, got, c.want)
		}
	}
}
