package main

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/wharfdata/wharf/store"
)

func TestSplitObject(t *testing.T) {
	abs, _ := filepath.Abs("data/a.csv")
	tests := []struct {
		raw, scheme, bucket, key string
	}{
		{"s3://b/k", "s3", "b", "k"},
		{"s3://b/dir/sub/k.csv", "s3", "b", "dir/sub/k.csv"},
		{"mem://m/x/y", "mem", "m", "x/y"},
		{"r2://acct/b/k", "r2", "b", "k"},
		{"file:///tmp/dir/a.csv", "file", "/tmp/dir", "a.csv"},
		{"/tmp/dir/a.csv", "file", "/tmp/dir", "a.csv"},
		{"data/a.csv", "file", filepath.Dir(abs), "a.csv"},
	}
	for _, tt := range tests {
		got, err := splitObject(tt.raw)
		if err != nil {
			t.Errorf("splitObject(%q): %v", tt.raw, err)
			continue
		}
		if got.loc.Scheme != tt.scheme || got.loc.Bucket != tt.bucket || got.key != tt.key || got.loc.Path != "" {
			t.Errorf("splitObject(%q) = %+v, key %q; want %s %s key %q", tt.raw, got.loc, got.key, tt.scheme, tt.bucket, tt.key)
		}
	}
}

func TestSplitObjectRefusesBucketsAndPrefixes(t *testing.T) {
	for _, raw := range []string{"s3://b", "s3://b/", "s3://b/dir/", "mem://m", "/"} {
		_, err := splitObject(raw)
		if !errors.Is(err, store.ErrKeyInvalid) {
			t.Errorf("splitObject(%q) = %v, want ErrKeyInvalid", raw, err)
		}
	}
	if _, err := splitObject("ftp://x/y"); !errors.Is(err, store.ErrEndpointUnsupported) {
		t.Errorf("ftp: %v, want ErrEndpointUnsupported", err)
	}
}

func TestSplitList(t *testing.T) {
	tests := []struct{ raw, bucket, prefix string }{
		{"s3://b", "b", ""},
		{"s3://b/", "b", ""},
		{"s3://b/logs/", "b", "logs/"},
		{"s3://b/logs", "b", "logs"},
		{"/tmp/dir", "/tmp/dir", ""},
		{"file:///tmp/dir/", "/tmp/dir", ""},
	}
	for _, tt := range tests {
		got, err := splitList(tt.raw)
		if err != nil {
			t.Fatalf("splitList(%q): %v", tt.raw, err)
		}
		if got.loc.Bucket != tt.bucket || got.prefix != tt.prefix || got.loc.Path != "" {
			t.Errorf("splitList(%q) = %+v prefix %q; want bucket %q prefix %q", tt.raw, got.loc, got.prefix, tt.bucket, tt.prefix)
		}
	}
}

func TestIsLocalPath(t *testing.T) {
	for raw, want := range map[string]bool{
		"a.csv": true, "./a": true, "/abs/a": true, "dir/x://y": true, "C:\\x": true,
		"-": false, "": false, "s3://b/k": false, "file:///a": false, "mem://m/k": false,
	} {
		if got := isLocalPath(raw); got != want {
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
	dir := t.TempDir()
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
		{dir, endLocal, filepath.Join(dir, "a.csv"), "", ""},
		{dir + "/new/", endLocal, filepath.Join(dir, "new", "a.csv"), "", ""},
		{dir + "/b.csv", endLocal, dir + "/b.csv", "", ""},
		{"file://" + dir, endStore, "", dir, "a.csv"},
		{"file://" + dir + "/c.csv", endStore, "", dir, "c.csv"},
		{"-", endStdio, "", "", ""},
	}
	for _, tt := range tests {
		e, err := parseDest(tt.raw, "a.csv")
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
	for _, raw := range []string{"s3://b/in/", t.TempDir()} {
		_, err := parseDest(raw, "")
		var u *usageError
		if !errors.As(err, &u) {
			t.Errorf("parseDest(%q, no name) = %v, want a usage error", raw, err)
		}
	}
}

func TestEndpointString(t *testing.T) {
	src, err := parseSource("s3://b/dir/k.csv")
	if err != nil {
		t.Fatal(err)
	}
	if got := src.String(); got != "s3://b/dir/k.csv" {
		t.Errorf("String() = %q", got)
	}
	if src.name() != "k.csv" {
		t.Errorf("name() = %q", src.name())
	}
}
