package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"runtime/debug"
	"strings"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// CopyOptions say what PlanCopy plans and how its Run copies.
type CopyOptions struct {
	Options        // how Run copies (Progress is Run's argument)
	Recursive bool // every file under a directory or object under a prefix, not one object
	// NoFsync leaves the files written to a local destination to the kernel's writeback
	// (DurableNone); it is refused for any other destination, and for standard input.
	NoFsync bool
	// DryRun plans only: nothing will be written, and Run is not called.
	DryRun bool
	Stdin  io.Reader // what "-" reads as the source
	Stdout io.Writer // what "-" writes as the destination
	// Skipped hears each source a recursive copy passes over, as it is found, named as
	// output names it (with the error that says why); the rest is copied.
	Skipped func(name string, err error)
	// Filter, with a recursive copy, takes only the names below the source it takes
	// (--include, --exclude); nil takes every one.
	Filter *Filter
	// ProveCreate, with IfAbsent, is asked before a store destination is written: it
	// refuses unless the store is proven to enforce a create-if-absent under base.
	ProveCreate func(ctx context.Context, s *store.Store, base string) error
}

// A Plan is what a copy will do: its two ends, opened, and the tasks. It holds stores open
// until Close.
type Plan struct {
	Tasks []Task
	// Passed counts what a recursive copy passes over: keys that cannot be a file or a key,
	// broken links, special files. Each was given to CopyOptions.Skipped as it was found.
	Passed int

	src, dst *End
	single   bool // one object, through Run's engine
	stream   bool // one object from standard input or to standard output
	treeWalk bool // list a store source with WalkTree (a sync), not in key order
	// match is the wildcard of a source key (s3://b/logs/*.gz), read as a filter on the
	// names below the prefix it is split from (SplitWildcard); nil without one.
	match  *Filter
	o      CopyOptions
	stores Stores
}

// defaultReadPartSize is the part size of parallel downloads to local disk unless
// Options.ReadPartSize is set: a download part buffers nothing, and with many files in
// flight fewer, longer ranged GETs cost the server less (64 MiB files downloaded ~20 % faster
// from MinIO than as 16 MiB parts; see bench/README.md).
const defaultReadPartSize = 64 << 20

// PlanCopy resolves src and dst, each a local path, a store URL or "-" (standard input as
// src, standard output as dst), opens what it must and lists what to copy; nothing is
// written. One object (not Recursive) to a destination ending in '/', or an existing local
// directory, takes the source's base name. With Recursive every file or object under src is
// copied to the same relative name under dst. A mistake of the request is a *UsageError.
func PlanCopy(ctx context.Context, stores Stores, srcRaw, dstRaw string, o CopyOptions) (*Plan, error) {
	if o.ReadPartSize <= 0 {
		o.ReadPartSize = defaultReadPartSize
	}
	src, dst, err := stores.parseEnds(srcRaw, dstRaw, o)
	if err != nil {
		return nil, err
	}
	p := &Plan{src: src, dst: dst, o: o, stores: stores}
	if p.match, err = wildcard(src); err != nil {
		return nil, err
	}
	if p.match != nil {
		p.o.Recursive, o.Recursive = true, true // a wildcard names a tree's objects
	}
	if !o.Filter.IsZero() && !o.Recursive {
		return nil, usage("--include and --exclude choose among the files of a tree: add -r")
	}
	switch {
	case srcRaw == "-" || dstRaw == "-" || dstRaw == "stdout://":
		err = p.planStream(ctx)
	case o.Recursive:
		err = p.planTree(ctx)
	default:
		err = p.planOne(ctx)
	}
	if err == nil && !o.DryRun {
		err = p.prove(ctx)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	if o.NoFsync && dst.local != nil {
		dst.local.Durability = DurableNone
	}
	return p, nil
}

// parseEnds parses the two ends of a copy, refusing --no-fsync where it has no meaning.
func (s Stores) parseEnds(srcRaw, dstRaw string, o CopyOptions) (src, dst *End, err error) {
	src, srcErr := s.parse(srcRaw)
	dst, dstErr := s.parse(dstRaw)
	switch {
	case o.NoFsync && (dstErr != nil || dst.kind != endLocal):
		return nil, nil, usage("cp: --no-fsync is for copies to a local path, and %s is not one (a store makes its own writes durable)", dstRaw)
	case o.NoFsync && srcRaw == "-":
		return nil, nil, usage("cp: --no-fsync is for copies from a file or a store: a copy of standard input is always fsynced")
	case o.setsAttributes() && (dstErr != nil || dst.kind != endStore):
		return nil, nil, usage("cp: --content-type, the header flags, --storage-class and --sse set what an object carries: %s is not a store", dstRaw)
	case srcErr != nil:
		return nil, nil, srcErr
	case dstErr != nil:
		return nil, nil, dstErr
	}
	return src, dst, nil
}

// wildcard splits the wildcard off a store source's key (SplitWildcard), leaving the prefix
// to list in the end, and returns it as the filter the names below that prefix must pass
// (nil when there is none). A local path's wildcards are the shell's to expand.
func wildcard(src *End) (*Filter, error) {
	if src.kind != endStore || !HasWildcard(src.loc.Key) {
		return nil, nil
	}
	base, pattern, _ := SplitWildcard(src.loc.Key)
	f, err := PatternFilter(pattern)
	if err != nil {
		return nil, usage("%s: %v", src.raw, err)
	}
	src.loc.Key = base
	return f, nil
}

// takes reports whether the plan takes the name rel below its source's root: the source
// key's wildcard, then the filter.
func (p *Plan) takes(rel string) bool { return p.match.Takes(rel) && p.o.Filter.Takes(rel) }

// Close closes the stores the plan opened.
func (p *Plan) Close() {
	p.src.close()
	p.dst.close()
}

// Stream reports whether the plan copies one object from standard input or to standard
// output, which Run streams with no progress.
func (p *Plan) Stream() bool { return p.stream }

// Names is how output names the source and the destination of t.
func (p *Plan) Names(t Task) (src, dst string) {
	if p.stream {
		return p.src.String(), p.dst.String()
	}
	return p.src.url(t.Src), p.dst.url(t.Dst)
}

// MemoryBound is the soft limit on the Go heap Run copies under (0: none for a stream).
func (p *Plan) MemoryBound() int64 {
	if p.stream {
		return 0
	}
	return MemoryBound(p.o.Jobs, len(p.Tasks), p.o.PartSize)
}

// planStream plans the copy of one object from standard input or to standard output.
func (p *Plan) planStream(ctx context.Context) error {
	if p.o.Recursive {
		return usage("cp: -r copies many files: standard input or output carries only one")
	}
	if err := p.stores.asObject(p.src); err != nil {
		return err
	}
	if err := p.stores.asDest(p.dst, p.src.name()); err != nil {
		return err
	}
	if p.dst.kind == endStdio && p.o.IfAbsent {
		return usage("cp: --if-absent has no meaning when writing to standard output")
	}
	p.stream = true
	p.Tasks = []Task{{Src: p.src.base, Dst: p.dst.base, Size: -1}}
	if p.dst.kind == endStore && p.o.IfAbsent && !p.o.DryRun {
		return p.stores.openOne(ctx, p.dst, true) // for prove, and for Run
	}
	return nil
}

// planOne plans the copy of one object.
func (p *Plan) planOne(ctx context.Context) error {
	src, dst := p.src, p.dst
	if err := p.stores.asObject(src); err != nil {
		return err
	}
	size, etag := int64(-1), ""
	if src.kind == endLocal {
		fi, err := os.Stat(src.path)
		if err != nil {
			return LocalError("stat", src.path, err)
		}
		if fi.IsDir() {
			return usage("cp: %s is a directory: use -r to copy what is in it", src.path)
		}
		if fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	if err := p.stores.asDest(dst, src.name()); err != nil {
		return err
	}
	p.single = true
	if err := p.stores.openOne(ctx, src, false); err != nil {
		return err
	}
	if err := p.stores.openOne(ctx, dst, true); err != nil {
		return err
	}
	if src.st != nil {
		// The size up front: for the progress bar, and to download a large object in parts.
		info, err := src.st.Head(ctx, src.base)
		if err != nil {
			return fmt.Errorf("%s: %w", src.raw, err)
		}
		size, etag = info.Size, info.ETag
	}
	p.Tasks = []Task{{Src: src.base, Dst: dst.base, Size: size, SrcETag: etag}}
	return nil
}

// planTree plans a recursive copy: every file or object under src to the same relative name
// under dst.
func (p *Plan) planTree(ctx context.Context) error {
	if err := p.stores.openTree(ctx, p.src, false); err != nil {
		return err
	}
	if err := p.stores.openTree(ctx, p.dst, true); err != nil {
		return err
	}
	return p.listTasks(ctx)
}

// prove asks ProveCreate about a store destination of a copy with IfAbsent.
func (p *Plan) prove(ctx context.Context) error {
	if !p.o.IfAbsent || p.dst.st == nil || p.o.ProveCreate == nil {
		return nil
	}
	return p.o.ProveCreate(ctx, p.dst.st, p.dst.base)
}

// listTasks lists the source and maps each key below it to the destination. What cannot be
// copied is passed over, each given to Skipped with its reason as it is found, and the rest
// is copied: a key that cannot be a local file name or a key of the destination, a non-empty
// object whose key ends in '/', a key that another key needs as a directory, a broken link or
// a special file. Only zero-byte directory markers are skipped silently.
func (p *Plan) listTasks(ctx context.Context) error {
	if err := p.collect(ctx); err != nil {
		return err
	}
	switch {
	case len(p.Tasks) == 0 && p.Passed > 0:
		return Incomplete(p.Passed, 0, false)
	case len(p.Tasks) == 0:
		return &store.Error{Op: "cp", Key: p.src.raw, Kind: store.ErrNotExist,
			Err: errors.New("nothing to copy: no file or object under it")}
	}
	return nil
}

// collect lists the source into p.Tasks, passing over what cannot be copied (listTasks).
func (p *Plan) collect(ctx context.Context) error {
	src, dst := p.src, p.dst
	pass := func(key string, err error) {
		p.Passed++
		if p.o.Skipped != nil {
			p.o.Skipped(src.url(key), err)
		}
	}
	var listing iter.Seq2[store.ObjectInfo, error]
	if src.local != nil {
		listing = src.local.Walk(ctx, "")
	} else if p.treeWalk {
		listing = src.st.WalkTree(ctx, src.base, listWidth)
	} else {
		listing = src.st.Walk(ctx, src.base)
	}
	for o, err := range listing {
		switch {
		case err != nil && Passed(err):
			pass(o.Key, err)
			continue
		case err != nil:
			return fmt.Errorf("%s: %w", src.raw, err)
		}
		if !p.takes(strings.TrimPrefix(o.Key, src.base)) {
			continue
		}
		t, ok, err := taskOf(o, src, dst)
		if err != nil {
			pass(o.Key, err)
			continue
		}
		if ok {
			p.Tasks = append(p.Tasks, t)
		}
	}
	if dst.local != nil {
		var clashes []Task
		p.Tasks, clashes = fileDirClashes(p.Tasks, dst.base)
		for _, t := range clashes {
			err := &store.Error{Op: "path", Key: t.Dst, Kind: store.ErrKeyInvalid,
				Err: errors.New("another key needs this name as a directory, so it cannot also be a file")}
			pass(t.Src, err)
		}
	}
	return nil
}

// taskOf maps o, listed under src, to its copy to dst. A key ending in '/' (a directory
// marker, or an object another tool wrote there) is copied into a store that keeps such
// keys; where the copy makes files (a local directory, a file store), it reports false for a
// directory marker (zero bytes) and an error for one with bytes, which the copy passes over.
// It reports an error for any other key the copy must pass over.
func taskOf(o store.ObjectInfo, src, dst *End) (Task, bool, error) {
	rel := strings.TrimPrefix(o.Key, src.base)
	if rel == "" {
		return Task{}, false, nil // the marker of the directory copied itself
	}
	if strings.HasSuffix(rel, "/") && !keepsSlashKeys(dst) {
		if o.Size == 0 {
			return Task{}, false, nil // a directory marker
		}
		return Task{}, false, &store.Error{Op: "get", Key: o.Key, Kind: store.ErrKeyInvalid,
			Err: fmt.Errorf("an object of %d bytes whose key ends in '/' cannot be copied to %s: no file name ends in '/'", o.Size, dst.raw)}
	}
	if src.st != nil {
		if err := store.ValidateKey("get", o.Key); err != nil {
			return Task{}, false, err
		}
	}
	switch {
	case dst.local != nil:
		if _, err := dst.local.Path(dst.base + rel); err != nil {
			return Task{}, false, err
		}
	case dst.st != nil:
		if err := store.ValidateKey("put", dst.base+rel); err != nil {
			return Task{}, false, err
		}
	}
	t := Task{Src: o.Key, Dst: dst.base + rel, Size: o.Size, srcTime: o.LastModified, srcETag: o.ETag, srcCRC: o.CRC32C}
	if src.st != nil {
		t.SrcETag = o.ETag
	}
	return t, true, nil
}

// keepsSlashKeys reports whether dst keeps keys ending in '/': a store whose objects are not
// files of this machine.
func keepsSlashKeys(dst *End) bool { return dst.st != nil && !dst.st.Describe().Local() }

// fileDirClashes splits off the tasks whose destination another task needs as a directory
// (the keys "a" and "a/b" cannot both be local files): those are passed over, and what is
// below them is copied.
func fileDirClashes(tasks []Task, base string) (kept, clashes []Task) {
	files := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		files[t.Dst] = true
	}
	dirs := map[string]bool{}
	for _, t := range tasks {
		for i := len(base); i < len(t.Dst); i++ {
			if t.Dst[i] == '/' && files[t.Dst[:i]] {
				dirs[t.Dst[:i]] = true
			}
		}
	}
	if len(dirs) == 0 {
		return tasks, nil
	}
	kept = tasks[:0:0]
	for _, t := range tasks {
		if dirs[t.Dst] {
			clashes = append(clashes, t)
		} else {
			kept = append(kept, t)
		}
	}
	return kept, clashes
}

// Copied is what a copy of one object reports: where the bytes came from and went, and what
// the destination recorded.
type Copied struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Size        int64  `json:"size"`
	ETag        string `json:"etag"` // "" for a local file or standard output
	// Verified: the bytes read from a store matched the CRC-32C the object carries. Unverified:
	// the object carried none, so nothing checked them. Both are false for a local source.
	Verified   bool `json:"verified"`
	Unverified bool `json:"unverified,omitempty"`
}

// Run copies what p lists, reporting to prog (nil: nothing; a stream reports nothing). A copy
// of one object sets the Summary's Copied, unless its bytes went to standard output. A
// failure names the URL it happened at. A copy that passed over some sources is not an error
// of Run's: the caller reports Incomplete once it has reported what was copied.
func (p *Plan) Run(ctx context.Context, prog Progress) (Summary, error) {
	if p.stream {
		res, err := p.runStream(ctx)
		sum := Summary{Files: 1, Bytes: res.Size}
		if err == nil && p.dst.kind != endStdio {
			sum.Copied = &res
		}
		return sum, err
	}
	opts := p.o.Options
	opts.Progress = prog
	if p.src.st != nil && p.dst.st != nil && sameStore(p.src.loc, p.dst.loc) && !opts.setsAttributes() {
		opts.ServerSide = p.dst.st
	}
	// Part buffers are pooled and reused, so the heap is mostly live buffers: a low GC target
	// keeps peak memory near parts in flight × part size without costing a collection per part.
	// A download to local disk holds no part buffer, and its small live heap would collect
	// every few requests at that target: it gets the default one, under the same limit.
	gc := 25
	if p.dst.local != nil {
		gc = 100
	}
	defer debug.SetGCPercent(debug.SetGCPercent(gc))
	sum, err := Run(ctx, p.src.source(), p.dst.dest(), p.Tasks, opts)
	if err == nil && p.dst.local != nil {
		err = p.dst.local.Sync()
	}
	if err != nil {
		return sum, p.named(err)
	}
	if p.single {
		t := p.Tasks[0]
		res := Copied{Source: p.src.url(t.Src), Destination: p.dst.url(t.Dst), Size: sum.Bytes,
			Verified: sum.Verified > 0, Unverified: sum.Unverified > 0}
		if p.src.local != nil {
			res.Source = p.src.raw
		}
		sum.Copied = &res
	}
	return sum, nil
}

// named names the URL a failure happened at: store errors name only their key.
func (p *Plan) named(err error) error {
	var se *store.Error
	if store.IsContext(err) || !errors.As(err, &se) {
		return err
	}
	switch {
	case se.Op == "put" && p.dst.st != nil:
		return fmt.Errorf("%s: %w", p.dst.url(se.Key), err)
	case (se.Op == "get" || se.Op == "head") && p.src.st != nil:
		return fmt.Errorf("%s: %w", p.src.url(se.Key), err)
	}
	return err
}

// sameStore reports whether two locations are the same bucket reached the same way (a named
// store of the config file is its own scheme).
func sameStore(x, y store.Location) bool {
	return x.Root().String() == y.Root().String()
}

// Incomplete is the error of a recursive copy that passed over n sources (each named as it
// was found) and copied the rest (or, on a dry run, would copy it).
func Incomplete(n, copied int, dryRun bool) error {
	done := "copied"
	if dryRun {
		done = "would be copied"
	}
	return errcode.E("cp", "", ErrIncomplete,
		fmt.Errorf("%d passed over (each named above), %d %s", n, copied, done))
}
