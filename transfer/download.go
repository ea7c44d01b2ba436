package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/wharfdata/wharf/internal/crc32c"
	"github.com/wharfdata/wharf/store"
)

// download copies a large object into a Local file as Options.Parts ranged reads at once,
// each pinned to the ETag of the first, written at their offsets in a temporary file. It
// returns the complete file for the caller to commit.
func (r *runner) download(ctx context.Context, l *Local, t Task) (store.ObjectInfo, *pending, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	first, err := r.src.Get(ctx, t.Src, &store.GetOptions{Length: r.o.ReadPartSize})
	if err != nil {
		return store.ObjectInfo{}, nil, err
	}
	size, etag := first.Info.Size, first.Info.ETag
	path, err := l.Path(t.Dst)
	if err != nil {
		first.Close()
		return store.ObjectInfo{}, nil, err
	}
	pf, err := l.create(path, condOf(r.putOptions(t, size)), size)
	if err != nil {
		first.Close()
		return store.ObjectInfo{}, nil, err
	}
	want := r.wantedSum(ctx, t.Src, first.Info)
	p := &parts{r: r, l: l, f: pf.f.File, key: t.Src, etag: etag, path: path, cancel: cancel}
	p.run(ctx, first, size)
	if err = p.err; err == nil {
		err = ctx.Err() // cancelled before every part had started
	}
	if err == nil {
		sum, _ := p.sums.Sum(p.count)
		err = r.checkSum(t.Src, size, sum, want)
	}
	if err != nil {
		pf.abort()
		return store.ObjectInfo{}, nil, err
	}
	pf.size = size
	return store.ObjectInfo{Key: t.Dst, Size: size, ETag: etag}, pf, nil
}

// parts is one parallel download in flight.
type parts struct {
	r      *runner
	l      *Local
	f      *os.File
	key    string
	etag   string
	path   string
	cancel context.CancelFunc

	mu    sync.Mutex
	err   error
	sums  crc32c.Pieces // each part's CRC-32C
	count int           // parts started
}

func (p *parts) run(ctx context.Context, first *store.Object, size int64) {
	ps := p.r.o.ReadPartSize
	sem := make(chan struct{}, p.r.o.Parts)
	var wg sync.WaitGroup
	for off := int64(0); off < size || off == 0; off += ps {
		n := min(ps, size-off)
		sem <- struct{}{}
		if ctx.Err() != nil {
			<-sem
			if off == 0 {
				first.Close()
			}
			break
		}
		body := first
		first = nil
		i := p.count
		p.count++
		wg.Go(func() {
			defer func() { <-sem }()
			p.fail(p.part(ctx, i, body, off, n))
		})
		if size == 0 {
			break
		}
	}
	wg.Wait()
}

// part copies bytes [off, off+n) of the object into the file as part i, noting their
// CRC-32C; body, when not nil, is already open at off.
func (p *parts) part(ctx context.Context, i int, body *store.Object, off, n int64) error {
	if body == nil {
		var err error
		body, err = p.r.src.Get(ctx, p.key, &store.GetOptions{IfMatch: p.etag, Offset: off, Length: n})
		if err != nil {
			return err
		}
		if p.etag != "" && body.Info.ETag != "" && body.Info.ETag != p.etag {
			body.Close()
			return &store.Error{Op: "get", Key: p.key, Kind: store.ErrPreconditionFailed,
				Err: errors.New("the object changed while it was being read")}
		}
	}
	defer body.Close()
	sum := &sumWriter{w: p.l.writer(io.NewOffsetWriter(p.f, off), p.f, off)}
	got, err := copyCtx(ctx, sum, newCounter(body, p.r.o.Progress))
	if err != nil {
		return writeErr(ctx, p.path, err)
	}
	if got != n {
		return &store.Error{Op: "get", Key: p.key, Kind: store.ErrUnavailable,
			Err: fmt.Errorf("%w (part at %d: want %d bytes, read %d)", errSize, off, n, got)}
	}
	p.mu.Lock()
	p.sums.Set(i, sum.crc, n)
	p.mu.Unlock()
	return nil
}

func (p *parts) fail(err error) {
	if err == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil || store.IsContext(p.err) && !store.IsContext(err) {
		p.err = err
	}
	p.cancel()
}
