package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wharfdata/wharf/store"
)

// Source is where a copy reads: a *store.Store, or a Local directory.
type Source interface {
	Get(ctx context.Context, key string, opts *store.GetOptions) (*store.Object, error)
}

// Dest is where a copy writes: a *store.Store, or a Local directory.
type Dest interface {
	Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error)
}

// Task is one copy: the source key and the destination key.
type Task struct {
	Src string `json:"source"`
	Dst string `json:"destination"`
	// Size is the size the listing reported, or -1 when unknown. The source's own answer to
	// Get wins.
	Size int64 `json:"size"`
	// SrcETag is the ETag the source had when it was planned ("" for a local file): a move
	// removes the source only while it still has it.
	SrcETag string `json:"-"`
	// IfAbsent makes this task's write a create that never replaces (as Options.IfAbsent
	// does for every task), and IfMatch a replace of the destination only while it still has
	// this ETag (a Local file's is LocalETag): a sync's writes, planned against a listing of
	// the destination. A refusal of either does not stop the run (Summary.Refused).
	IfAbsent bool   `json:"-"`
	IfMatch  string `json:"-"`

	srcTime time.Time // the source's modification time as listed (a sync compares it)
	srcCRC  string    // the source's CRC-32C as listed, where the listing gives it (a sync compares it)
	srcETag string    // the source's ETag as listed, a local file's too (a sync compares it)
}

// Defaults of Options.
const (
	DefaultJobs     = 32       // files in flight
	DefaultPartSize = 16 << 20 // bytes per part of a multipart upload
	DefaultParts    = 4        // parts in flight per file
	DefaultMaxParts = 8        // parts buffered across every file
)

// Options tune Run. The zero value uses the defaults.
type Options struct {
	Jobs     int   // tasks in flight
	PartSize int64 // part size for multipart uploads and parallel downloads
	// ReadPartSize, when set, is the part size of parallel downloads to a Local directory
	// instead of PartSize. A download part buffers nothing (it is written at its offset as it
	// arrives), so it can be larger than an upload part at no cost in memory, and fewer, longer
	// reads cost the server less.
	ReadPartSize int64
	Parts        int // parts in flight per file
	// MaxParts bounds the parts buffered across every task: a file larger than PartSize
	// holds Parts of this budget while it is copied.
	MaxParts int
	IfAbsent bool // conditional create: never replace an existing destination
	// Committers is how many finished files over 1 MiB a Local destination fsyncs and renames
	// into place at once, off the copying goroutines (DefaultCommitters when 0); smaller files
	// are synced in batches by one more goroutine.
	Committers int
	// ContentType and Headers, where set, are given to every object written to a store, over
	// what it would otherwise carry from its source (its content type, each standard header
	// set here replacing the source's and the others kept). A copy that sets them is never a
	// server-side copy: the bytes are streamed, so that each header is merged the same way.
	ContentType string
	Headers     store.Headers
	// StorageClass and Encryption, where set, are given to every object written to a store
	// (PutOptions): like the attributes above, a copy that sets them is streamed.
	StorageClass string
	Encryption   store.Encryption
	// ServerSide, when set, is the one store holding both source and destination: each task
	// is a server-side copy (store.Copy) instead of a Get and a Put.
	ServerSide *store.Store
	Progress   Progress // nil: no progress reports
}

func (o Options) withDefaults() Options {
	if o.Jobs <= 0 {
		o.Jobs = DefaultJobs
	}
	if o.PartSize <= 0 {
		o.PartSize = DefaultPartSize
	}
	if o.ReadPartSize <= 0 {
		o.ReadPartSize = o.PartSize
	}
	if o.Parts <= 0 {
		o.Parts = DefaultParts
	}
	if o.MaxParts <= 0 {
		o.MaxParts = DefaultMaxParts
	}
	if o.Committers <= 0 {
		o.Committers = DefaultCommitters
	}
	o.Parts = min(o.Parts, o.MaxParts)
	if o.Progress == nil {
		o.Progress = nopProgress{}
	}
	return o
}

// Progress hears what Run does. Its methods are called from many goroutines at once.
type Progress interface {
	// Bytes reports n more bytes moved; n is negative when a resent request rewinds.
	Bytes(n int64)
	// Done reports a finished task: err is nil on success.
	Done(t Task, info store.ObjectInfo, err error)
}

type nopProgress struct{}

func (nopProgress) Bytes(int64)                        {}
func (nopProgress) Done(Task, store.ObjectInfo, error) {}

// Summary is what Run did.
type Summary struct {
	Files   int   `json:"files"`
	Bytes   int64 `json:"bytes"`
	Refused int   `json:"refused,omitempty"` // destinations that existed, with IfAbsent
	// Verified counts the objects read from a store whose bytes were checked against the
	// CRC-32C the object carries; Unverified those read from a store that gave none (an
	// object another tool wrote, a store that keeps none). Files read from a Local directory
	// are neither.
	Verified   int           `json:"verified"`
	Unverified int           `json:"unverified"`
	Duration   time.Duration `json:"-"`
	// Copied is what a Plan's copy of one object copied; nil for a tree, and when the bytes
	// went to standard output.
	Copied *Copied `json:"-"`
}

// Run copies every task from src to dst, Options.Jobs at a time. It stops at the first failure
// (cancelling the copies in flight, which leave nothing behind) and returns it; refusals of
// IfAbsent do not stop it, and are returned at the end as one store.ErrPreconditionFailed.
func Run(ctx context.Context, src Source, dst Dest, tasks []Task, o Options) (Summary, error) {
	o = o.withDefaults()
	r := &runner{src: src, dst: dst, o: o, large: make(chan struct{}, max(1, o.MaxParts/o.Parts))}
	start := time.Now()
	ctx, r.cancel = context.WithCancel(ctx)
	defer r.cancel()
	jobs := min(o.Jobs, max(len(tasks), 1))
	if _, ok := dst.(*Local); ok {
		r.commits = startCommitters(ctx, min(o.Committers, jobs), jobs)
	}
	work := make(chan Task)
	var wg sync.WaitGroup
	for range jobs {
		wg.Go(func() {
			for t := range work {
				r.one(ctx, t)
			}
		})
	}
feed:
	for _, t := range tasks {
		select {
		case work <- t:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if r.commits != nil {
		r.commits.wait() // every file synced and renamed, or removed
	}
	s := Summary{Files: int(r.files.Load()), Bytes: r.bytes.Load(), Refused: int(r.refused.Load()), Duration: time.Since(start),
		Verified: int(r.verified.Load()), Unverified: int(r.unverified.Load())}
	return s, r.result(ctx)
}

type runner struct {
	src     Source
	dst     Dest
	o       Options
	large   chan struct{} // one slot per file copied in parts
	commits *committers   // for a Local destination
	cancel  context.CancelFunc

	files, refused       atomic.Int64
	bytes                atomic.Int64
	verified, unverified atomic.Int64 // objects read from a store, checked or not (verify.go)

	mu           sync.Mutex
	err          error // first failure
	firstRefusal error
}

// fail records err, the failure of t, and reports whether the run must stop.
func (r *runner) fail(t Task, err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if refusal(r.o, t, err) {
		r.refused.Add(1)
		if r.firstRefusal == nil {
			r.firstRefusal = err
		}
		return false
	}
	if r.err == nil || store.IsContext(r.err) && !store.IsContext(err) {
		r.err = err
	}
	return true
}

func (r *runner) result(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.err != nil && !(store.IsContext(r.err) && ctx.Err() == nil):
		return r.err
	case ctx.Err() != nil:
		return ctx.Err()
	case r.firstRefusal != nil:
		n := r.refused.Load()
		if n == 1 {
			return r.firstRefusal
		}
		return fmt.Errorf("%d destinations exist and were left as they are; the first: %w", n, r.firstRefusal)
	}
	return nil
}

// one copies one task; a file copied to a Local directory is committed by the committers,
// and counts as done only then.
func (r *runner) one(ctx context.Context, t Task) {
	if err := ctx.Err(); err != nil {
		r.stop(t, err)
		return
	}
	var info store.ObjectInfo
	var p *pending
	var err error
	if r.o.ServerSide != nil {
		info, err = r.o.ServerSide.Copy(ctx, t.Src, t.Dst, r.putOptions(t, t.Size))
		if err == nil {
			r.o.Progress.Bytes(info.Size)
		}
	} else {
		info, p, err = r.stream(ctx, t)
	}
	if err != nil || p == nil {
		r.finish(t, info, err)
		return
	}
	r.commits.submit(ctx, commitJob{p: p, done: func(err error) { r.finish(t, info, err) }})
}

// finish reports a task done, counting it or stopping the run.
func (r *runner) finish(t Task, info store.ObjectInfo, err error) {
	r.o.Progress.Done(t, info, err)
	if err != nil {
		r.stop(t, err)
		return
	}
	r.files.Add(1)
	r.bytes.Add(info.Size)
}

// refusal reports whether err, the failure of t, is its destination refusing a conditional
// write: a create onto an existing key, or a replace of a version it no longer holds (on S3
// an If-Match put onto a key removed meanwhile is a 404, not a 412).
func refusal(o Options, t Task, err error) bool {
	if errors.Is(err, store.ErrPreconditionFailed) {
		return o.IfAbsent || t.IfAbsent || t.IfMatch != ""
	}
	var se *store.Error
	return t.IfMatch != "" && errors.Is(err, store.ErrNotExist) && errors.As(err, &se) && se.Op == "put"
}

// stop records err, the failure of t, and cancels the run unless err is a refusal it goes
// on after.
func (r *runner) stop(t Task, err error) {
	if r.fail(t, err) {
		r.cancel()
	}
}

// setsAttributes reports whether o sets a content type, a standard header, a storage class or
// an encryption.
func (o Options) setsAttributes() bool {
	return o.ContentType != "" || !o.Headers.IsZero() || o.StorageClass != "" || !o.Encryption.IsZero()
}

// overlay sets on po the content type and each standard header o sets, over what po carries.
func (o Options) overlay(po *store.PutOptions) {
	if o.ContentType != "" {
		po.ContentType = o.ContentType
	}
	po.StorageClass, po.Encryption = o.StorageClass, o.Encryption
	h, set := &po.Headers, o.Headers
	for _, f := range []struct {
		dst *string
		v   string
	}{
		{&h.CacheControl, set.CacheControl}, {&h.ContentDisposition, set.ContentDisposition},
		{&h.ContentEncoding, set.ContentEncoding}, {&h.ContentLanguage, set.ContentLanguage},
	} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
}

// putOptions are the options of t's write of size bytes: its conditions, and the parts.
func (r *runner) putOptions(t Task, size int64) *store.PutOptions {
	return &store.PutOptions{IfNoneMatch: r.o.IfAbsent || t.IfAbsent, IfMatch: t.IfMatch,
		Size: size, PartSize: r.o.PartSize, Concurrency: r.o.Parts}
}

// MemoryBound is the soft limit on the Go heap a copy of files files, jobs at a time in
// parts of partSize, runs under: part buffers are pooled and reused, so the heap is mostly
// the parts in flight (DefaultParts for one file, else up to DefaultMaxParts across all),
// and 24 MiB besides.
func MemoryBound(jobs, files int, partSize int64) int64 {
	parts := min(DefaultMaxParts, DefaultParts*max(jobs, 1))
	if files == 1 {
		parts = DefaultParts
	}
	return int64(parts)*max(partSize, 5<<20) + 24<<20
}
