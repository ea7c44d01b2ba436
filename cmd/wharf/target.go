package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/file"
)

// An object target is the store to open (its root: the bucket, container or directory) and
// the key inside it.
type objectTarget struct {
	loc store.Location // Key is always empty
	key string
}

// A listing target is the store to open and the prefix to list inside it.
type listTarget struct {
	loc    store.Location // Key is always empty
	prefix string
}

// splitObject splits a URL naming one object into its store's root and the key. A URL that
// names only a bucket, a prefix ending in '/' or a directory is ErrKeyInvalid.
func (a *app) splitObject(raw string) (objectTarget, error) {
	loc, err := a.parseURL(raw)
	if err != nil {
		return objectTarget{}, err
	}
	loc, ok := a.storeConfig(nil).ObjectLocation(loc)
	if !ok {
		what := "a bucket or a prefix"
		if loc.Scheme == "file" {
			what = "a directory"
		}
		return objectTarget{}, notAnObject(raw, what)
	}
	return objectTarget{loc: loc.Root(), key: loc.Key}, nil
}

func notAnObject(raw, what string) error {
	return &store.Error{Op: "parse-url", Key: raw, Kind: store.ErrKeyInvalid,
		Err: errors.New("the URL names " + what + ", not an object")}
}

// splitList splits a URL naming what to list into its store's root and the prefix.
func (a *app) splitList(raw string) (listTarget, error) {
	loc, err := a.parseURL(raw)
	if err != nil {
		return listTarget{}, err
	}
	return listTarget{loc: loc.Root(), prefix: loc.Key}, nil
}

// openList splits raw as splitList does and opens its store; the caller closes it.
func (a *app) openList(ctx context.Context, raw string) (listTarget, *store.Store, error) {
	t, err := a.splitList(raw)
	if err != nil {
		return t, nil, err
	}
	s, err := a.open(ctx, t.loc)
	if err != nil {
		return t, nil, fmt.Errorf("%s: %w", raw, err)
	}
	return t, s, nil
}

// isLocalPath reports whether raw names plain local files: a path or a file:// URL that is
// not inside a file store (no directory at or above it holds .wharf-meta). cp reads and
// writes those as ordinary files; inside a file store it goes through the store, which
// keeps content types, headers and metadata. Every other command reads both the same way
// (docs/cli.md, "Local paths"). "-" is standard input or output, not a path.
func (a *app) isLocalPath(raw string) bool {
	if raw == "-" || raw == "" {
		return false
	}
	loc, err := a.parseURL(raw)
	return err == nil && loc.Scheme == "file" && !file.IsStore(loc.Bucket)
}

// localPath is the path of a local URL (file:///abs/x or a plain path), as isLocalPath
// accepts it.
func localPath(raw string) string {
	if rest, ok := strings.CutPrefix(raw, "file://"); ok {
		p := filepath.FromSlash(rest)
		if strings.HasSuffix(rest, "/") {
			p += string(filepath.Separator)
		}
		return p
	}
	return raw
}

// baseName is the last segment of a key or path, ignoring a trailing '/'.
func baseName(keyOrPath string) string {
	s := strings.TrimRight(filepath.ToSlash(keyOrPath), "/")
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}
