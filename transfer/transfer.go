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

// Source is where a copy reads: a store.Store, or a Local directory.
type Source interface {
	Get(ctx context.Context, key string, opts *store.GetOptions) (*store.Object, error)
}

// Dest is where a copy writes: a store.Store, or a Local directory.
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
	Parts    int   // parts in flight per file
	// MaxParts bounds the parts buffered across every task: a file larger than PartSize
	// holds Parts of this budget while it is copied.
	MaxParts int
	IfAbsent bool // conditional create: never replace an existing destination
	// ServerSide, when set, is the one store holding both source and destination: each task
	// is a server-side copy (store.Copy) instead of a Get and a Put.
	ServerSide store.Store
	Progress   Progress // nil: no progress reports
}

func (o Options) withDefaults() Options {
	if o.Jobs <= 0 {
		o.Jobs = DefaultJobs
	}
	if o.PartSize <= 0 {
		o.PartSize = DefaultPartSize
	}
	if o.Parts <= 0 {
		o.Parts = DefaultParts
	}
	if o.MaxParts <= 0 {
		o.MaxParts = DefaultMaxParts
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
	Files    int           `json:"files"`
	Bytes    int64         `json:"bytes"`
	Refused  int           `json:"refused,omitempty"` // destinations that existed, with IfAbsent
	Duration time.Duration `json:"-"`
}

// Run copies every task from src to dst, Options.Jobs at a time. It stops at the first failure
// (cancelling the copies in flight, which leave nothing behind) and returns it; refusals of
// IfAbsent do not stop it, and are returned at the end as one store.ErrPreconditionFailed.
func Run(ctx context.Context, src Source, dst Dest, tasks []Task, o Options) (Summary, error) {
	o = o.withDefaults()
	r := &runner{src: src, dst: dst, o: o, large: make(chan struct{}, max(1, o.MaxParts/o.Parts))}
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan Task)
	var wg sync.WaitGroup
	for range min(o.Jobs, max(len(tasks), 1)) {
		wg.Go(func() {
			for t := range work {
				if err := r.one(ctx, t); err != nil && r.fail(err) {
					cancel()
				}
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
	s := Summary{Files: int(r.files.Load()), Bytes: r.bytes.Load(), Refused: int(r.refused.Load()), Duration: time.Since(start)}
	return s, r.result(ctx)
}

type runner struct {
	src   Source
	dst   Dest
	o     Options
	large chan struct{} // one slot per file copied in parts

	files, refused atomic.Int64
	bytes          atomic.Int64

	mu           sync.Mutex
	err          error // first failure
	firstRefusal error
}

// fail records err and reports whether the run must stop.
func (r *runner) fail(err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.o.IfAbsent && errors.Is(err, store.ErrPreconditionFailed) {
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

// one copies one task.
func (r *runner) one(ctx context.Context, t Task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var info store.ObjectInfo
	var err error
	if r.o.ServerSide != nil {
		info, err = store.Copy(ctx, r.o.ServerSide, t.Src, t.Dst, r.putOptions(t.Size))
		if err == nil {
			r.o.Progress.Bytes(info.Size)
		}
	} else {
		info, err = r.stream(ctx, t)
	}
	r.o.Progress.Done(t, info, err)
	if err != nil {
		return err
	}
	r.files.Add(1)
	r.bytes.Add(info.Size)
	return nil
}

func (r *runner) putOptions(size int64) *store.PutOptions {
	return &store.PutOptions{IfNoneMatch: r.o.IfAbsent, Size: size, PartSize: r.o.PartSize, Concurrency: r.o.Parts}
}
