package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wharfdata/wharf/store"
)

func (a *app) cpCommand() *cobra.Command {
	var ifAbsent bool
	cmd := &cobra.Command{
		Use:   "cp SRC DST",
		Short: "Copy one object between local files and stores",
		Long: `Copy one object: from a local file to a store, from a store to a local file, or
between stores (server-side when both are the same bucket). The bytes are streamed, never
staged whole in memory or on disk; large uploads go in parts.

SRC and DST are each one of:
  a local path     ./report.csv, /data/out.csv (read and written as plain files)
  a store URL      s3://bucket/key, gs://bucket/key, file:///abs/dir/key, mem://name/key
  -                standard input (as SRC) or standard output (as DST)

Like 'aws s3 cp', when DST ends with '/' or is an existing local directory, the copy
takes the source's base name: 'wharf cp ./a.csv s3://b/in/' writes s3://b/in/a.csv.

A local destination is written to a temporary file in the same directory and renamed
into place only when complete: a failed or interrupted copy (Ctrl-C) leaves no partial
file. With --if-absent the copy never replaces an existing object or file: it fails with
WHARF_PRECONDITION_FAILED (exit 1) instead, decided by the store itself (If-None-Match).`,
		Example: `  wharf cp ./examples/data/orders/2024-01-01.csv s3://my-bucket/orders/
  wharf cp s3://my-bucket/orders/2024-01-01.csv ./downloads/
  wharf cp --if-absent ./manifest.json s3://my-bucket/exports/manifest.json
  wharf cp s3://src-bucket/a.ndjson gs://dst-bucket/a.ndjson
  pg_dump mydb | gzip | wharf cp - s3://my-bucket/backups/mydb.sql.gz`,
		Args: args(2, 2, "SRC and DST"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.cp(cmd.Context(), argv[0], argv[1], ifAbsent)
		},
	}
	cmd.Flags().BoolVar(&ifAbsent, "if-absent", false, "fail instead of replacing an existing destination (If-None-Match)")
	return cmd
}

// cpResult is what cp reports: where the bytes came from and went, and what the destination
// recorded.
type cpResult struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Size        int64  `json:"size"`
	ETag        string `json:"etag,omitempty"`
}

func (a *app) cp(ctx context.Context, srcRaw, dstRaw string, ifAbsent bool) error {
	src, err := parseSource(srcRaw)
	if err != nil {
		return err
	}
	dst, err := parseDest(dstRaw, src.name())
	if err != nil {
		return err
	}
	if dst.kind == endStdio && ifAbsent {
		return usageErr(fmt.Errorf("cp: --if-absent has no meaning when writing to standard output"))
	}
	res, err := a.transfer(ctx, src, dst, ifAbsent)
	if err != nil {
		return err
	}
	switch {
	case dst.kind == endStdio:
		return nil
	case a.format == "json":
		return writeJSON(a.out, res)
	case !a.quiet:
		_, err = fmt.Fprintf(a.out, "copied %s -> %s (%d bytes)\n", res.Source, res.Destination, res.Size)
	}
	return err
}

// transfer picks how to move the bytes: server-side within one store, else a stream from the
// source's reader into the destination.
func (a *app) transfer(ctx context.Context, src, dst endpoint, ifAbsent bool) (cpResult, error) {
	res := cpResult{Source: src.String(), Destination: dst.String()}
	if src.kind == endStore && dst.kind == endStore && sameStore(src.t.loc, dst.t.loc) {
		info, err := a.copyWithin(ctx, src, dst, ifAbsent)
		res.Size, res.ETag = info.Size, info.ETag
		return res, err
	}
	r, err := a.openSource(ctx, src)
	if err != nil {
		return res, err
	}
	defer r.Close()
	info, err := a.writeDest(ctx, dst, r, ifAbsent)
	res.Size, res.ETag = info.Size, info.ETag
	return res, err
}

func (a *app) copyWithin(ctx context.Context, src, dst endpoint, ifAbsent bool) (store.ObjectInfo, error) {
	s, err := a.open(ctx, src.t.loc)
	if err != nil {
		return store.ObjectInfo{}, fmt.Errorf("%s: %w", src.raw, err)
	}
	defer s.Close()
	info, err := store.Copy(ctx, s, src.t.key, dst.t.key, &store.PutOptions{IfNoneMatch: ifAbsent})
	if err != nil {
		return info, fmt.Errorf("cp %s %s: %w", src.raw, dst.raw, err)
	}
	return info, nil
}

// sameStore reports whether two locations are the same bucket reached the same way.
func sameStore(x, y store.Location) bool {
	return x.String() == y.String() && x.Query.Encode() == y.Query.Encode()
}

type endKind int

const (
	endLocal endKind = iota // a plain local file
	endStdio                // standard input or output
	endStore                // an object in a store
)

// endpoint is one side of a copy.
type endpoint struct {
	raw  string
	kind endKind
	path string       // endLocal: the file
	t    objectTarget // endStore: the store and key
}

func (e endpoint) String() string {
	switch e.kind {
	case endLocal:
		return e.path
	case endStdio:
		return "-"
	}
	if e.t.loc.Scheme == "file" {
		return "file://" + filepath.ToSlash(filepath.Join(e.t.loc.Bucket, e.t.key))
	}
	l := e.t.loc
	l.Path = e.t.key
	return l.String()
}

// name is the base name a directory destination takes from this source.
func (e endpoint) name() string {
	switch e.kind {
	case endLocal:
		return filepath.Base(e.path)
	case endStore:
		return baseName(e.t.key)
	}
	return ""
}

func parseSource(raw string) (endpoint, error) {
	switch {
	case raw == "-":
		return endpoint{raw: raw, kind: endStdio}, nil
	case isLocalPath(raw):
		return endpoint{raw: raw, kind: endLocal, path: raw}, nil
	}
	t, err := splitObject(raw)
	if err != nil {
		return endpoint{}, err
	}
	return endpoint{raw: raw, kind: endStore, t: t}, nil
}

// parseDest resolves the destination: a directory (a trailing '/', or an existing local
// directory) takes the source's base name.
func parseDest(raw, name string) (endpoint, error) {
	if raw == "-" {
		return endpoint{raw: raw, kind: endStdio}, nil
	}
	dirLike := strings.HasSuffix(raw, "/") || strings.HasSuffix(raw, string(os.PathSeparator))
	needName := func() error {
		if name != "" {
			return nil
		}
		return usageErr(fmt.Errorf("cp: %s names a directory or prefix: give the full destination name when copying from standard input", raw))
	}
	if isLocalPath(raw) {
		if dirLike || isDir(raw) {
			if err := needName(); err != nil {
				return endpoint{}, err
			}
			return endpoint{raw: raw, kind: endLocal, path: filepath.Join(raw, name)}, nil
		}
		return endpoint{raw: raw, kind: endLocal, path: raw}, nil
	}
	loc, err := store.ParseURL(raw)
	if err != nil {
		return endpoint{}, err
	}
	if loc.Scheme == "file" && (dirLike || isDir(loc.Bucket)) || loc.Scheme != "file" && (loc.Path == "" || strings.HasSuffix(loc.Path, "/")) {
		if err := needName(); err != nil {
			return endpoint{}, err
		}
		return endpoint{raw: raw, kind: endStore, t: intoDir(loc, name)}, nil
	}
	t, err := splitObject(raw)
	if err != nil {
		return endpoint{}, err
	}
	return endpoint{raw: raw, kind: endStore, t: t}, nil
}

// intoDir is the target for name inside the directory or prefix loc names.
func intoDir(loc store.Location, name string) objectTarget {
	if loc.Scheme == "file" {
		return objectTarget{loc: loc, key: name}
	}
	return objectTarget{loc: loc.Root(), key: loc.Path + name}
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
