package backfill

import (
	"context"
	"errors"
	"fmt"
	"io"

	"golang.org/x/sync/semaphore"

	"github.com/wharfdata/wharf/store"
)

// piece is one ranged, pinned GET of a member: bytes [off, off+n).
type piece struct {
	member int
	off, n int64
	last   bool  // the member's last piece
	cost   int64 // what it takes of the window: its buffer's size
	data   []byte
	err    error
	ready  chan struct{}
}

// fetcher reads a split's members from first on, in order, as ranged GETs pinned to each
// member's ETag: at most conc requests in flight and window bytes fetched but not yet
// consumed, so small objects are read many at once and large ones in parallel ranges. A
// range that breaks mid-body is resumed by the store (pinned); one that fails past the retry
// policy fails its member. Ranges are read into the job's pooled buffers, each returned once
// it has been consumed.
type fetcher struct {
	s      *store.Store
	split  *Split
	req    int64
	pool   *bufPool
	bytes  *semaphore.Weighted
	conc   chan struct{}
	out    chan *piece
	cancel context.CancelFunc
	done   chan struct{}
	// read counts bytes received from the store (for metrics); called from many goroutines.
	read func(int64)
}

func newFetcher(ctx context.Context, s *store.Store, split *Split, first int, cfg *Config, pool *bufPool, read func(int64)) *fetcher {
	ctx, cancel := context.WithCancel(ctx)
	f := &fetcher{s: s, split: split, req: cfg.ReadRequest, pool: pool, bytes: semaphore.NewWeighted(fetchWindow(cfg)),
		conc: make(chan struct{}, cfg.ReadConcurrency), out: make(chan *piece, cfg.ReadConcurrency),
		cancel: cancel, done: make(chan struct{}), read: read}
	go f.run(ctx, first)
	return f
}

// run launches the pieces in order until the split ends or ctx is cancelled; a member the
// split leaves out (quarantined) is not read.
func (f *fetcher) run(ctx context.Context, first int) {
	defer close(f.done)
	defer close(f.out)
	for m := first; m < len(f.split.Members); m++ {
		if f.split.Skipped(m) {
			continue
		}
		size := f.split.Members[m].Size
		for off := int64(0); off < size || (off == 0 && size == 0); off += f.req {
			n := min(f.req, size-off)
			p := &piece{member: m, off: off, n: n, last: off+n >= size, cost: int64(max(bufSize(int(n)), 1)), ready: make(chan struct{})}
			if err := f.bytes.Acquire(ctx, p.cost); err != nil {
				return
			}
			select {
			case f.conc <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go f.get(ctx, p)
			select {
			case f.out <- p:
			case <-ctx.Done():
				return
			}
			if size == 0 {
				break
			}
		}
	}
}

// decodeReserve is what a split holds besides the ranges it fetched ahead: its decoder (a
// zstd decoder keeps twice its frame's window: 4 MiB at the usual 2 MiB) and its batches on
// their way to the sink (one being filled, batchQueue ready, one being written).
const decodeReserve = 4<<20 + (batchQueue+2)*batchBytes

// fetchWindow is how many bytes a split fetches ahead: its read window less decodeReserve,
// and at least one ranged GET's buffer.
func fetchWindow(cfg *Config) int64 {
	return max(cfg.ReadWindow-decodeReserve, int64(bufSize(int(cfg.ReadRequest))))
}

// get fetches one piece; a zero-length member is checked by a HEAD.
func (f *fetcher) get(ctx context.Context, p *piece) {
	defer close(p.ready)
	defer func() { <-f.conc }()
	m := f.split.Members[p.member]
	if p.n == 0 {
		info, err := f.s.Head(ctx, m.Key)
		if err == nil && info.ETag != m.ETag {
			err = changed(m, info.ETag)
		}
		p.err = err
		return
	}
	obj, err := f.s.Get(ctx, m.Key, &store.GetOptions{IfMatch: m.ETag, Offset: p.off, Length: p.n})
	if err != nil {
		p.err = err
		return
	}
	defer obj.Close()
	if obj.Info.ETag != "" && obj.Info.ETag != m.ETag {
		p.err = changed(m, obj.Info.ETag) // a server that ignores the pin
		return
	}
	p.data = f.pool.get(int(p.n))[:p.n]
	n, err := io.ReadFull(obj, p.data)
	f.read(int64(n))
	if err != nil {
		p.err = fmt.Errorf("range %d+%d: %w", p.off, p.n, err)
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			p.err = &store.Error{Op: "get", Key: m.Key, Kind: store.ErrPreconditionFailed,
				Err: fmt.Errorf("object shorter than its planned %d bytes: %w", m.Size, err)}
		}
	}
}

func changed(m Member, etag string) error {
	return &store.Error{Op: "get", Key: m.Key, Kind: store.ErrPreconditionFailed,
		Err: fmt.Errorf("ETag is %q, the split was planned at %q", etag, m.ETag)}
}

// close stops the fetcher and waits for it.
func (f *fetcher) close() {
	f.cancel()
	for p := range f.out {
		<-p.ready
		f.free(p)
	}
	<-f.done
}

// free gives a consumed piece's buffer and window share back.
func (f *fetcher) free(p *piece) {
	f.pool.put(p.data)
	p.data = nil
	f.bytes.Release(p.cost)
}

// memberReader reads one member's bytes from the fetcher's pieces, in order.
type memberReader struct {
	f      *fetcher
	member int
	cur    *piece
	pos    int
	eof    bool
	err    error // the first fetch error: the store's, not the decoder's
}

func (r *memberReader) Read(b []byte) (int, error) {
	for {
		if r.err != nil {
			return 0, r.err
		}
		if r.cur != nil && r.pos < len(r.cur.data) {
			n := copy(b, r.cur.data[r.pos:])
			r.pos += n
			return n, nil
		}
		if r.cur != nil {
			last := r.cur.last
			r.f.free(r.cur)
			r.cur = nil
			if last {
				r.eof = true
			}
		}
		if r.eof {
			return 0, io.EOF
		}
		p, ok := <-r.f.out
		if !ok {
			r.err = context.Canceled
			return 0, r.err
		}
		<-p.ready
		if p.member != r.member {
			r.f.free(p)
			r.err = fmt.Errorf("backfill: piece of member %d read as member %d", p.member, r.member)
			return 0, r.err
		}
		if p.err != nil {
			r.f.free(p)
			r.err = p.err
			return 0, r.err
		}
		r.cur, r.pos = p, 0
	}
}

// drain consumes what is left of the member (after its records ended early, on an error).
func (r *memberReader) drain() {
	if r.cur != nil {
		r.eof = r.cur.last
		r.f.free(r.cur)
		r.cur = nil
	}
	for !r.eof && r.err == nil {
		p, ok := <-r.f.out
		if !ok {
			return
		}
		<-p.ready
		r.f.free(p)
		r.eof = p.last
	}
}
