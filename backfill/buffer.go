package backfill

import "math/bits"

// bufPool keeps a job's large buffers (fetched ranges, batches and their record ends) for
// reuse, so that reading a prefix allocates and zeroes its working set once rather than once
// per range and batch. Sizes are rounded up to a power of two from minPooled on; smaller
// buffers are plain allocations. Each class keeps at most poolDepth free buffers; what is
// returned beyond that is left to the collector. A bufPool is safe for concurrent use.
type bufPool struct {
	free [poolClasses]chan []byte
	ends chan []int
}

const (
	minPooledShift = 16 // 64 KiB
	minPooled      = 1 << minPooledShift
	poolClasses    = 13 // 64 KiB … 256 MiB
	poolDepth      = 64
	maxPooledEnds  = 64 << 10 // record ends (of a batch of records of 8 bytes on average)
)

func newBufPool() *bufPool {
	p := &bufPool{ends: make(chan []int, poolDepth)}
	for i := range p.free {
		p.free[i] = make(chan []byte, poolDepth)
	}
	return p
}

// class returns the class of a buffer of n bytes, and false when n is not pooled.
func class(n int) (int, bool) {
	if n <= minPooled/2 {
		return 0, false
	}
	c := max(bits.Len(uint(n-1))-minPooledShift, 0)
	return c, c < poolClasses
}

// bufSize is how many bytes a buffer for n bytes takes: what get(n) allocates.
func bufSize(n int) int {
	if c, ok := class(n); ok {
		return minPooled << c
	}
	return n
}

// get returns a buffer of length bufSize(n) (not zeroed when reused).
func (p *bufPool) get(n int) []byte {
	c, ok := class(n)
	if !ok {
		return make([]byte, n)
	}
	select {
	case b := <-p.free[c]:
		return b[:cap(b)]
	default:
		return make([]byte, minPooled<<c)
	}
}

// put returns a buffer that get gave; nil and buffers of other sizes are ignored.
func (p *bufPool) put(b []byte) {
	c, ok := class(cap(b))
	if !ok || cap(b) != minPooled<<c {
		return
	}
	select {
	case p.free[c] <- b[:0]:
	default:
	}
}

// getEnds returns an empty slice for a batch's record ends.
func (p *bufPool) getEnds() []int {
	select {
	case e := <-p.ends:
		return e
	default:
		return make([]int, 0, 4096)
	}
}

// putEnds returns a slice getEnds gave (grown or not).
func (p *bufPool) putEnds(e []int) {
	if e == nil || cap(e) > maxPooledEnds {
		return
	}
	select {
	case p.ends <- e[:0]:
	default:
	}
}
