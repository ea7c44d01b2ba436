package transfer

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/file"
	_ "github.com/wharfdata/wharf/store/s3" // s3:// and r2://
)

// testStores reads URLs as the CLI does, with no config file.
var testStores = Stores{Config: &store.Config{}, IsStore: file.IsStore}

func TestParseObject(t *testing.T) {
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
		got, err := testStores.ParseObject(tt.raw)
		if err != nil {
			t.Errorf("ParseObject(%q): %v", tt.raw, err)
			continue
		}
		if got.Scheme != tt.scheme || got.Bucket != tt.bucket || got.Key != tt.key {
			t.Errorf("ParseObject(%q) = %+v; want %s %s key %q", tt.raw, got, tt.scheme, tt.bucket, tt.key)
		}
	}
}

// TestLocalPathsFindTheirStore: every spelling of a path below a file store (a directory
// holding .wharf-meta) names a key of that store, at any depth.
func TestLocalPathsFindTheirStore(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".wharf-meta"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{root + "/sub/b.txt", "file://" + root + "/sub/b.txt"} {
		got, err := testStores.ParseObject(raw)
		if err != nil || got.Bucket != root || got.Key != "sub/b.txt" {
			t.Errorf("ParseObject(%q) = %+v, %v; want root %s key sub/b.txt", raw, got, err, root)
		}
		if e, err := testStores.parse(raw); err != nil || e.kind != endStore {
			t.Errorf("parse(%q) = %+v, %v: a path inside a file store is the store's", raw, e, err)
		}
	}
	e, err := testStores.parse(root + "/sub/")
	if err != nil || e.kind != endStore || e.loc.Bucket != root || e.loc.Key != "sub/" {
		t.Errorf("parse of a directory in the store = %+v, %v", e, err)
	}
}

func TestParseObjectRefusesBucketsAndPrefixes(t *testing.T) {
	for _, raw := range []string{"s3://b", "s3://b/", "s3://b/dir/", "mem://m", "/", t.TempDir() + "/"} {
		_, err := testStores.ParseObject(raw)
		if !errors.Is(err, store.ErrKeyInvalid) {
			t.Errorf("ParseObject(%q) = %v, want ErrKeyInvalid", raw, err)
		}
	}
	if _, err := testStores.ParseObject("ftp://x/y"); !errors.Is(err, driver.ErrEndpointUnsupported) {
		t.Errorf("ftp: %v, want ErrEndpointUnsupported", err)
	}
}

// TestParseStorePrefix: a store URL keeps its key, the prefix of a tree, as it was written.
func TestParseStorePrefix(t *testing.T) {
	tests := []struct{ raw, bucket, prefix string }{
		{"s3://b", "b", ""},
		{"s3://b/", "b", ""},
		{"s3://b/logs/", "b", "logs/"},
		{"s3://b/logs", "b", "logs"},
	}
	for _, tt := range tests {
		e, err := testStores.parse(tt.raw)
		if err != nil {
			t.Fatalf("parse(%q): %v", tt.raw, err)
		}
		if e.kind != endStore || e.loc.Bucket != tt.bucket || e.loc.Key != tt.prefix {
			t.Errorf("parse(%q) = %+v; want bucket %q prefix %q", tt.raw, e.loc, tt.bucket, tt.prefix)
		}
	}
}

func TestParseLocalPath(t *testing.T) {
	for raw, want := range map[string]bool{
		"a.csv": true, "./a": true, "/abs/a": true, "dir/x://y": true, "file:///a": true,
		"-": false, "s3://b/k": false, "mem://m/k": false,
	} {
		e, err := testStores.parse(raw)
		if err != nil {
			t.Fatalf("parse(%q): %v", raw, err)
		}
		if got := e.kind == endLocal; got != want {
			t.Errorf("parse(%q) is local: %v, want %v", raw, got, want)
		}
	}
	if _, err := testStores.parse(""); err == nil {
		t.Error(`parse("") succeeded`)
	}
}

func TestBaseName(t *testing.T) {
	for in, want := range map[string]string{"a/b/c.csv": "c.csv", "c": "c", "a/b/": "b", "": ""} {
		if got := baseName(in); got != want {
			t.Errorf("baseName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAsDest(t *testing.T) {
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
		e, err := testStores.parse(tt.raw)
		if err == nil {
			err = testStores.asDest(e, "a.csv")
		}
		if err != nil {
			t.Fatalf("destination %q: %v", tt.raw, err)
		}
		if e.kind != tt.kind || e.path != tt.path || e.loc.Bucket != tt.bucket || e.base != tt.key {
			t.Errorf("destination %q = kind %d path %q bucket %q key %q; want %d %q %q %q",
				tt.raw, e.kind, e.path, e.loc.Bucket, e.base, tt.kind, tt.path, tt.bucket, tt.key)
		}
	}
}

func TestAsDestFromStdinNeedsAName(t *testing.T) {
	for _, raw := range []string{"s3://b/in/", t.TempDir()} {
		e, err := testStores.parse(raw)
		if err == nil {
			err = testStores.asDest(e, "")
		}
		var u *UsageError
		if !errors.As(err, &u) {
			t.Errorf("destination %q, no name: %v, want a usage error", raw, err)
		}
	}
}

func TestEndString(t *testing.T) {
	e, err := testStores.parse("s3://b/dir/k#1.csv")
	if err == nil {
		err = testStores.asObject(e)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := e.String(); got != "s3://b/dir/k#1.csv" {
		t.Errorf("String() = %q", got)
	}
	if e.name() != "k#1.csv" {
		t.Errorf("name() = %q", e.name())
	}
}
