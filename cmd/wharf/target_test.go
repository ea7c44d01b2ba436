package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

func TestSplitObject(t *testing.T) {
	a := newTestApp(nil, "")
	abs, _ := filepath.Abs("data/a.csv")
	tests := []struct {
		raw, scheme, bucket, key string
	}{
		{"s3://b/k", "s3", "b", "k"},
		{"s3://b/dir/sub/k.csv", "s3", "b", "dir/sub/k.csv"},
		{"s3://b/report#v2", "s3", "b", "report#v2"},
		{"s3://b/dir%2Ffile", "s3", "b", "dir%2Ffile"},
		{"mem://m/x/y", "mem", "m", "x/y"},
		{"r2://acct/b/k", "r2", "b", "k"},
		{"file:///tmp/wharf-no-dir/a.csv", "file", "/tmp/wharf-no-dir", "a.csv"},
		{"/tmp/wharf-no-dir/a.csv", "file", "/tmp/wharf-no-dir", "a.csv"},
		{"data/a.csv", "file", filepath.Dir(abs), "a.csv"},
	}
	for _, tt := range tests {
		got, err := a.splitObject(tt.raw)
		if err != nil {
			t.Errorf("splitObject(%q): %v", tt.raw, err)
			continue
		}
		if got.loc.Scheme != tt.scheme || got.loc.Bucket != tt.bucket || got.key != tt.key || got.loc.Key != "" {
			t.Errorf("splitObject(%q) = %+v, key %q; want %s %s key %q", tt.raw, got.loc, got.key, tt.scheme, tt.bucket, tt.key)
		}
	}
}

// TestLocalPathsFindTheirStore: every spelling of a path below a file store (a directory
// holding .wharf-meta) names a key of that store, at any depth.
func TestLocalPathsFindTheirStore(t *testing.T) {
	a := newTestApp(nil, "")
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".wharf-meta"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{root + "/sub/b.txt", "file://" + root + "/sub/b.txt"} {
		got, err := a.splitObject(raw)
		if err != nil || got.loc.Bucket != root || got.key != "sub/b.txt" {
			t.Errorf("splitObject(%q) = %+v %q, %v; want root %s key sub/b.txt", raw, got.loc, got.key, err, root)
		}
		if a.isLocalPath(raw) {
			t.Errorf("isLocalPath(%q): a path inside a file store is the store's", raw)
		}
	}
	l, err := a.splitList(root + "/sub/")
	if err != nil || l.loc.Bucket != root || l.prefix != "sub/" {
		t.Errorf("splitList of a directory in the store = %+v %q, %v", l.loc, l.prefix, err)
	}
}

func TestSplitObjectRefusesBucketsAndPrefixes(t *testing.T) {
	a := newTestApp(nil, "")
	for _, raw := range []string{"s3://b", "s3://b/", "s3://b/dir/", "mem://m", "/", t.TempDir() + "/"} {
		_, err := a.splitObject(raw)
		if !errors.Is(err, store.ErrKeyInvalid) {
			t.Errorf("splitObject(%q) = %v, want ErrKeyInvalid", raw, err)
		}
	}
	if _, err := a.splitObject("ftp://x/y"); !errors.Is(err, driver.ErrEndpointUnsupported) {
		t.Errorf("ftp: %v, want ErrEndpointUnsupported", err)
	}
}

func TestSplitList(t *testing.T) {
	a := newTestApp(nil, "")
	tests := []struct{ raw, bucket, prefix string }{
		{"s3://b", "b", ""},
		{"s3://b/", "b", ""},
		{"s3://b/logs/", "b", "logs/"},
		{"s3://b/logs", "b", "logs"},
		{"/tmp/wharf-no-dir", "/tmp/wharf-no-dir", ""},
		{"file:///tmp/wharf-no-dir/", "/tmp/wharf-no-dir", ""},
	}
	for _, tt := range tests {
		got, err := a.splitList(tt.raw)
		if err != nil {
			t.Fatalf("splitList(%q): %v", tt.raw, err)
		}
		if got.loc.Bucket != tt.bucket || got.prefix != tt.prefix || got.loc.Key != "" {
			t.Errorf("splitList(%q) = %+v prefix %q; want bucket %q prefix %q", tt.raw, got.loc, got.prefix, tt.bucket, tt.prefix)
		}
	}
}

func TestIsLocalPath(t *testing.T) {
	a := newTestApp(nil, "")
	for raw, want := range map[string]bool{
		"a.csv": true, "./a": true, "/abs/a": true, "dir/x://y": true, "file:///a": true,
		"-": false, "": false, "s3://b/k": false, "mem://m/k": false,
	} {
		if got := a.isLocalPath(raw); got != want {
			t.Errorf("isLocalPath(%q) = %v, want %v", raw, got, want)
		}
	}
}

func TestBaseName(t *testing.T) {
	for in, want := range map[string]string{"a/b/c.csv": "c.csv", "c": "c", "a/b/": "b", "": ""} {
		if got := baseName(in); got != want {
			t.Errorf("baseName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseDest(t *testing.T) {
	a := newTestApp(nil, "")
	dir := t.TempDir()
	storeDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(storeDir, ".wharf-meta"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		raw    string
		kind   endKind
		path   string // endLocal
		bucket string // endStore
		key    string
	}{
		{"s3://b/in/", endStore, "", "b", "in/a.csv"},
		{"s3://b", endStore, "", "b", "a.csv"},
		{"s3://b/in/x.csv", endStore, "", "b", "in/x.csv"},
		{"s3://b/in/x#1.csv", endStore, "", "b", "in/x#1.csv"},
		{dir, endLocal, filepath.Join(dir, "a.csv"), "", ""},
		{dir + "/new/", endLocal, filepath.Join(dir, "new", "a.csv"), "", ""},
		{dir + "/b.csv", endLocal, dir + "/b.csv", "", ""},
		{"file://" + dir, endLocal, filepath.Join(dir, "a.csv"), "", ""},
		{"file://" + dir + "/c.csv", endLocal, dir + "/c.csv", "", ""},
		{storeDir, endStore, "", storeDir, "a.csv"},
		{"file://" + storeDir + "/sub/c.csv", endStore, "", storeDir, "sub/c.csv"},
		{"-", endStdio, "", "", ""},
	}
	for _, tt := range tests {
		e, err := a.parseDest(tt.raw, "a.csv")
		if err != nil {
			t.Fatalf("parseDest(%q): %v", tt.raw, err)
		}
		if e.kind != tt.kind || e.path != tt.path || e.t.loc.Bucket != tt.bucket || e.t.key != tt.key {
			t.Errorf("parseDest(%q) = kind %d path %q bucket %q key %q; want %d %q %q %q",
				tt.raw, e.kind, e.path, e.t.loc.Bucket, e.t.key, tt.kind, tt.path, tt.bucket, tt.key)
		}
	}
}

func TestParseDestFromStdinNeedsAName(t *testing.T) {
	a := newTestApp(nil, "")
	for _, raw := range []string{"s3://b/in/", t.TempDir()} {
		_, err := a.parseDest(raw, "")
		var u *usageError
		if !errors.As(err, &u) {
			t.Errorf("parseDest(%q, no name) = %v, want a usage error", raw, err)
		}
	}
}

func TestEndpointString(t *testing.T) {
	src, err := newTestApp(nil, "").parseSource("s3://b/dir/k#1.csv")
	if err != nil {
		t.Fatal(err)
	}
	if got := src.String(); got != "s3://b/dir/k#1.csv" {
		t.Errorf("String() = %q", got)
	}
	if src.name() != "k#1.csv" {
		t.Errorf("name() = %q", src.name())
	}
}
