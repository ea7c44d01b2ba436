package main

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/wharfdata/wharf/store"
)

// An object target is the store to open (its root: the bucket, container or directory) and
// the key inside it.
type objectTarget struct {
	loc store.Location // Path is always empty
	key string
}

// A listing target is the store to open and the prefix to list inside it.
type listTarget struct {
	loc    store.Location // Path is always empty
	prefix string
}

// splitObject splits a URL naming one object. For the file store (whose Location.Bucket is
// an absolute path) the store is the parent directory and the key the base name; for every
// other store the bucket root and loc.Path. A URL that names only a bucket or a prefix ending
// in '/' is ErrKeyInvalid.
func splitObject(raw string) (objectTarget, error) {
	loc, err := store.ParseURL(raw)
	if err != nil {
		return objectTarget{}, err
	}
	if loc.Scheme == "file" {
		dir, base := filepath.Split(loc.Bucket)
		if base == "" {
			return objectTarget{}, notAnObject(raw, "a directory")
		}
		loc.Bucket = filepath.Clean(dir)
		return objectTarget{loc: loc, key: base}, nil
	}
	if loc.Path == "" || strings.HasSuffix(loc.Path, "/") {
		return objectTarget{}, notAnObject(raw, "a bucket or a prefix")
	}
	key := loc.Path
	return objectTarget{loc: loc.Root(), key: key}, nil
}

func notAnObject(raw, what string) error {
	return &store.Error{Op: "parse-url", Key: raw, Kind: store.ErrKeyInvalid,
		Err: errors.New("the URL names " + what + ", not an object")}
}

// splitList splits a URL naming what to list: for the file store, the directory itself with
// an empty prefix; for every other store the bucket root and loc.Path as the prefix.
func splitList(raw string) (listTarget, error) {
	loc, err := store.ParseURL(raw)
	if err != nil {
		return listTarget{}, err
	}
	if loc.Scheme == "file" {
		return listTarget{loc: loc}, nil
	}
	return listTarget{loc: loc.Root(), prefix: loc.Path}, nil
}

// isLocalPath reports whether raw is a plain local path (no scheme), the form cp reads and
// writes as an ordinary file. "-" is standard input or output, not a path.
func isLocalPath(raw string) bool {
	if raw == "-" || raw == "" {
		return false
	}
	scheme, _, ok := strings.Cut(raw, "://")
	return !ok || strings.ContainsAny(scheme, "/.\\")
}

// baseName is the last segment of a key or path, ignoring a trailing '/'.
func baseName(keyOrPath string) string {
	s := strings.TrimRight(filepath.ToSlash(keyOrPath), "/")
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}
