package upload

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/wharfdata/wharf/internal/crc32c"
	"github.com/wharfdata/wharf/store/driver"
)

// sender sends the parts of one upload.
type sender struct {
	key      string
	p        Parts
	b        Backend
	opts     *driver.PutOptions
	partSize int64
	tokens   chan struct{} // one per part in flight: memory is bounded by Concurrency × partSize
	// ra, when set, is the body read in place: each part is a section of it, sent without a
	// buffer.
	ra io.ReaderAt

	mu     sync.Mutex
	err    error
	pieces crc32c.Pieces // each part's CRC-32C, computed before it is sent
}

// part is one part's bytes: a pooled buffer filled from the body, or a section of a body
// read in place.
type part struct {
	buf []byte
	sec *io.SectionReader
}

func (p part) size() int64 {
	if p.sec != nil {
		return p.sec.Size()
	}
	return int64(len(p.buf))
}

// sum returns the CRC-32C of the part's bytes: a section is read once more for it (from the
// page cache, for a file just read).
func (p part) sum() (uint32, error) {
	if p.sec == nil {
		return crc32c.Sum(p.buf), nil
	}
	h := crc32c.New()
	bp := sumBufs.Get().(*[]byte)
	defer sumBufs.Put(bp)
	if _, err := io.CopyBuffer(h, io.NewSectionReader(p.sec, 0, p.sec.Size()), *bp); err != nil {
		return 0, err
	}
	return h.Sum32(), nil
}

var sumBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// body returns a fresh reader of the part's bytes, for each attempt to send it.
func (p part) body() io.ReadSeeker {
	if p.sec != nil {
		return io.NewSectionReader(p.sec, 0, p.sec.Size())
	}
	return bytes.NewReader(p.buf)
}

// sendAll reads body into part buffers (or cuts a body read in place into sections) and
// sends up to cap(tokens) parts at once. It returns how many parts and bytes it sent, or the
// first error (the sends in flight are cancelled and waited for).
func (s *sender) sendAll(ctx context.Context, body io.Reader, first []byte) (parts int, total int64, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for n := 1; ; n++ {
		p, ok, last, err := s.next(ctx, body, first, n)
		first = nil
		if err != nil {
			s.fail(err)
			break
		}
		if !ok {
			break
		}
		parts, total = n, total+p.size()
		wg.Go(func() {
			defer s.release(p)
			crc, err := p.sum()
			if err != nil {
				s.fail(driver.BodyError(ctx, "put", s.key, err))
				cancel()
				return
			}
			s.mu.Lock()
			s.pieces.Set(n-1, crc, p.size())
			s.mu.Unlock()
			if err := s.send(ctx, n, p, crc32c.Format(crc)); err != nil {
				s.fail(err)
				cancel()
			}
		})
		if last {
			break
		}
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return parts, total, s.err
}

// next waits for a free slot and fills a buffer from body (or cuts the next section of a body
// read in place). ok is false when body is done; last is true when this part ends it.
func (s *sender) next(ctx context.Context, body io.Reader, first []byte, n int) (p part, ok, last bool, err error) {
	if first != nil {
		s.tokens <- struct{}{}
		return part{buf: first}, true, false, nil
	}
	if n > s.b.Limits.MaxParts {
		return part{}, false, false, &driver.Error{Op: "put", Key: s.key, Kind: driver.ErrUnsupported,
			Err: fmt.Errorf("body exceeds %d parts of %d bytes: give a larger part size", s.b.Limits.MaxParts, s.partSize)}
	}
	select {
	case s.tokens <- struct{}{}:
	case <-ctx.Done():
		return part{}, false, false, ctx.Err()
	}
	if s.failed() {
		<-s.tokens
		return part{}, false, false, ctx.Err()
	}
	if s.ra != nil {
		off := int64(n-1) * s.partSize
		m := min(s.partSize, s.opts.Size-off)
		return part{sec: io.NewSectionReader(s.ra, off, m)}, true, off+m >= s.opts.Size, nil
	}
	buf := getBuf(s.partSize)
	m, err := io.ReadFull(body, buf)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		if m == 0 && n > 1 {
			s.release(part{buf: buf})
			return part{}, false, true, nil
		}
		return part{buf: buf[:m]}, true, true, nil
	case err != nil:
		s.release(part{buf: buf})
		return part{}, false, false, driver.BodyError(ctx, "put", s.key, err)
	}
	return part{buf: buf}, true, false, nil
}

func (s *sender) release(p part) {
	if p.buf != nil {
		putBuf(p.buf)
	}
	<-s.tokens
}

func (s *sender) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

func (s *sender) failed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err != nil
}

// send sends part n, whose CRC-32C is crc, retried alone under the policy.
func (s *sender) send(ctx context.Context, n int, p part, crc string) error {
	return s.b.Policy.Do(ctx, driver.Request{Op: "put", Key: s.key, Replayable: true}, func(ctx context.Context) error {
		return s.p.Send(ctx, n, p.body(), p.size(), crc)
	})
}
