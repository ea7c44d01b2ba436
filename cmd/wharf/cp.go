package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/transfer"
)

func (a *app) cpCommand() *cobra.Command {
	var o cpOptions
	cmd := &cobra.Command{
		Use:   "cp SRC DST",
		Short: "Copy objects and files between local disk and stores, in parallel",
		Long: `Copy one object, or with -r every object under a prefix or every file under a
directory: local to store, store to local, or store to store. Bytes are streamed, never
staged whole in memory or on disk; within one bucket the store copies them itself (over
5 GiB on S3, in parts). Many files go in parallel (-j); a large file goes as
parallel parts (--part-size), with memory bounded by the parts in flight. Every copy is
checked against the size its source announced.

SRC and DST are each one of:
  a local path     ./report.csv, /data/out/ (read and written as plain files)
  a store URL      s3://bucket/key, file:///abs/dir/key, mem://name/key
  -                standard input (as SRC) or standard output (as DST), one object only

One object (no -r): when DST ends with '/' or is an existing local directory, the copy
takes the source's base name, as with 'aws s3 cp': 'wharf cp ./a.csv s3://b/in/' writes
s3://b/in/a.csv.

With -r, SRC is a directory or a prefix and DST is one too, with or without a trailing
'/', as with 'aws s3 cp --recursive': the files below SRC keep their relative names below
DST. 'wharf cp -r ./logs s3://b/archive' writes ./logs/2024/a.gz to
s3://b/archive/2024/a.gz. s3://b/logs and s3://b/logs/ both mean everything under logs/
(never logs-old/). Zero-byte directory marker keys (ending in '/') are skipped. What
cannot be copied is passed over, each named on stderr with its code (a key that cannot be
a local file name, such as one with a '..' segment; a non-empty key ending in '/'; a
broken symbolic link; a named pipe or socket), the rest is copied, and cp exits 1 with
WHARF_COPY_INCOMPLETE.

A failure or Ctrl-C stops every copy in flight and leaves nothing half-done: no partial
object at any key, no multipart upload left open, and no partial local file (local files
are written to a temporary file beside them and renamed into place when complete). With
--if-absent no existing object or file is ever replaced: the store itself refuses
(If-None-Match), the other copies go on, and wharf exits 1 with WHARF_PRECONDITION_FAILED.
A store must be proven to enforce that condition first: wharf remembers each store's probe
verdict for a day (~/.cache/wharf/probes.json) and probes one it has none for; where the
condition is not enforced (a proxy that drops it), cp --if-absent copies nothing and exits 1
with WHARF_COORDINATION_UNPROVEN.

A file written to a local path is on the disk before it is renamed into place (fsynced;
small files share one flush of the file system per batch), so once cp exits 0 the files
survive a power loss. --no-fsync leaves them to the kernel's writeback,
as s5cmd and rclone do: faster for large downloads, and a crash of wharf still never leaves
a partial file, but a power loss in the following seconds may leave files empty or short.

A recursive copy prints a line naming each file it wrote (NDJSON with --format json),
then a summary line; on a terminal a progress bar shows bytes, files, rate and ETA below
them. A local file that changes size while it is uploaded fails the copy with
WHARF_LOCAL_FILE_CHANGED (it is not retried).`,
		Example: `  wharf cp ./examples/data/orders/2024-01-01.csv s3://my-bucket/orders/
  wharf cp -r ./examples/data s3://my-bucket/data/
  wharf cp -r s3://my-bucket/data/orders ./downloads/orders
  wharf cp -r -j 64 s3://src-bucket/logs/ s3://dst-bucket/logs/
  wharf cp -r --dry-run ./site s3://my-bucket/www/
  wharf cp --if-absent ./manifest.json s3://my-bucket/exports/manifest.json
  pg_dump mydb | gzip | wharf cp - s3://my-bucket/backups/mydb.sql.gz`,
		Args: args(2, 2, "SRC and DST"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			size, err := parseSize(o.partSizeText)
			if err != nil {
				return usageErr(fmt.Errorf("cp: --part-size %q: %w", o.partSizeText, err))
			}
			o.partSize = size
			o.partSizeSet = cmd.Flags().Changed("part-size")
			return a.cp(cmd.Context(), argv[0], argv[1], o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.recursive, "recursive", "r", false, "copy every file under a directory or every object under a prefix")
	f.IntVarP(&o.jobs, "jobs", "j", transfer.DefaultJobs, "files copied in parallel")
	f.StringVar(&o.partSizeText, "part-size", "16MiB", "part size of large uploads, and of large downloads when given (else 64MiB); at least 5MiB for S3")
	f.BoolVar(&o.ifAbsent, "if-absent", false, "fail instead of replacing an existing destination (If-None-Match)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what would be copied, and copy nothing")
	f.BoolVar(&o.noFsync, "no-fsync", false, "do not fsync files written to a local DST: faster, but a power loss soon after may leave them empty or short (see docs/cli.md)")
	return cmd
}

// cpOptions are cp's flags.
type cpOptions struct {
	recursive, ifAbsent, dryRun bool
	noFsync                     bool
	jobs                        int
	partSizeText                string
	partSize                    int64
	partSizeSet                 bool // given on the command line, for downloads too
}

// cpResult is what cp reports: where the bytes came from and went, and what the destination
// recorded.
type cpResult struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Size        int64  `json:"size"`
	ETag        string `json:"etag"` // "" for a local file or standard output
}

func (a *app) cp(ctx context.Context, srcRaw, dstRaw string, o cpOptions) error {
	if o.jobs < 1 {
		return usageErr(fmt.Errorf("cp: -j %d: want at least 1", o.jobs))
	}
	switch {
	case o.noFsync && !a.isLocalPath(dstRaw):
		return usageErr(fmt.Errorf("cp: --no-fsync is for copies to a local path, and %s is not one (a store makes its own writes durable)", dstRaw))
	case o.noFsync && srcRaw == "-":
		return usageErr(fmt.Errorf("cp: --no-fsync is for copies from a file or a store: a copy of standard input is always fsynced"))
	}
	if srcRaw == "-" || dstRaw == "-" || dstRaw == "stdout://" {
		return a.cpStdio(ctx, srcRaw, dstRaw, o)
	}
	p, err := a.plan(ctx, srcRaw, dstRaw, o)
	if err != nil {
		return err
	}
	defer p.close()
	if o.noFsync && p.dst.local != nil {
		p.dst.local.Durability = transfer.DurableNone
	}
	if o.dryRun {
		return a.reportDryRun(p)
	}
	if o.ifAbsent && p.dst.st != nil {
		if err := a.requireCreate(ctx, p.dst.st, p.dst.base); err != nil {
			return err
		}
	}
	return a.runPlan(ctx, p, o)
}

// cpStdio copies one object from standard input or to standard output.
func (a *app) cpStdio(ctx context.Context, srcRaw, dstRaw string, o cpOptions) error {
	if o.recursive {
		return usageErr(fmt.Errorf("cp: -r copies many files: standard input or output carries only one"))
	}
	src, err := a.parseSource(srcRaw)
	if err != nil {
		return err
	}
	dst, err := a.parseDest(dstRaw, src.name())
	if err != nil {
		return err
	}
	if dst.kind == endStdio && o.ifAbsent {
		return usageErr(fmt.Errorf("cp: --if-absent has no meaning when writing to standard output"))
	}
	if o.dryRun {
		_, err := fmt.Fprintf(a.out, "would copy %s -> %s\n", src, dst)
		return err
	}
	if o.ifAbsent && dst.kind == endStore {
		s, err := a.open(ctx, dst.t.loc)
		if err != nil {
			return fmt.Errorf("%s: %w", dst.raw, err)
		}
		err = a.requireCreate(ctx, s, dst.t.key)
		s.Close()
		if err != nil {
			return err
		}
	}
	res, err := a.transfer(ctx, src, dst, o.ifAbsent)
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
	info, err := s.Copy(ctx, src.t.key, dst.t.key, &store.PutOptions{IfNoneMatch: ifAbsent})
	if err != nil {
		return info, fmt.Errorf("cp %s %s: %w", src.raw, dst.raw, err)
	}
	return info, nil
}

// sameStore reports whether two locations are the same bucket reached the same way (a named
// store of the config file is its own scheme).
func sameStore(x, y store.Location) bool {
	return x.Root().String() == y.Root().String()
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
	l := e.t.loc
	l.Key = e.t.key
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

func (a *app) parseSource(raw string) (endpoint, error) {
	switch {
	case raw == "-":
		return endpoint{raw: raw, kind: endStdio}, nil
	case a.isLocalPath(raw):
		return endpoint{raw: raw, kind: endLocal, path: localPath(raw)}, nil
	}
	t, err := a.splitObject(raw)
	if err != nil {
		return endpoint{}, err
	}
	return endpoint{raw: raw, kind: endStore, t: t}, nil
}

// parseDest resolves the destination: a directory (a trailing '/', or an existing local
// directory) takes the source's base name.
func (a *app) parseDest(raw, name string) (endpoint, error) {
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
	if a.isLocalPath(raw) {
		path := localPath(raw)
		if dirLike || isDir(path) {
			if err := needName(); err != nil {
				return endpoint{}, err
			}
			return endpoint{raw: raw, kind: endLocal, path: filepath.Join(path, name)}, nil
		}
		return endpoint{raw: raw, kind: endLocal, path: path}, nil
	}
	loc, err := a.parseURL(raw)
	if err != nil {
		return endpoint{}, err
	}
	if loc.Key == "" || strings.HasSuffix(loc.Key, "/") {
		if err := needName(); err != nil {
			return endpoint{}, err
		}
		return endpoint{raw: raw, kind: endStore, t: objectTarget{loc: loc.Root(), key: loc.Key + name}}, nil
	}
	t, err := a.splitObject(raw)
	if err != nil {
		return endpoint{}, err
	}
	return endpoint{raw: raw, kind: endStore, t: t}, nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
