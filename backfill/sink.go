package backfill

import (
	"bufio"
	"context"
	"io"
	"sync"
	"time"

	"github.com/wharfdata/wharf/errcode"
)

// Sink is where a job's records go. The engine opens a SplitWriter for each split it leases,
// writes the split's batches to it in order, and commits the split done once Close has
// returned; a SplitWriter acknowledges records by calling its Ack, which commits the split's
// watermark (fenced: it fails with ErrLeaseLost once another worker took the split over).
type Sink interface {
	// Open starts the records of split from the watermark from. It returns where the sink
	// wants them from: from itself, or the split's start (a sink that writes each split
	// whole).
	Open(ctx context.Context, split *Split, from Watermark, ack Ack) (SplitWriter, Watermark, error)
	// Finish runs once, on the leader, when every split of the plan is done or quarantined
	// (the store sink writes the manifest there).
	Finish(ctx context.Context, f *Finish) error
	// URL names the sink in the job's plan ("-" for standard output).
	URL() string
}

// Ack commits the split's watermark: every record before wm was acknowledged by the sink.
type Ack func(ctx context.Context, wm Watermark) error

// SplitWriter takes one split's records.
type SplitWriter interface {
	// Write takes a batch. The batch's memory is the writer's from then on.
	Write(ctx context.Context, b *Batch) error
	// Close returns once every record written is acknowledged; a sink that writes parts
	// returns the part.
	Close(ctx context.Context) (*PartInfo, error)
	// Abort drops the split's output (the split was lost or failed).
	Abort()
}

// Finish is what a sink learns when a job ends.
type Finish struct {
	Plan     *Plan
	Splits   []*Split      // in plan order
	States   []*SplitState // in plan order
	Error    error         // the job's failure (ErrQuarantined), or nil
	Finished time.Time     // the latest time a split finished: the same on every worker
}

// Stdout writes every record as one NDJSON line to w, batches of different splits
// interleaved. It acknowledges a split's records every commit interval, after flushing them
// to w. Delivery is at-least-once: a split resumed elsewhere repeats the records written
// after its last commit.
type Stdout struct {
	mu     sync.Mutex
	w      *bufio.Writer
	every  time.Duration
	now    func() time.Time
	failed error
}

// NewStdout returns the sink writing to w, acknowledging every interval.
func NewStdout(w io.Writer, interval time.Duration) *Stdout {
	// A batch of the size the reader cuts goes to w in one write, straight from its buffer;
	// the buffer only gathers small batches (the records of small objects).
	return &Stdout{w: bufio.NewWriterSize(w, 64<<10), every: interval, now: time.Now}
}

// URL implements Sink.
func (s *Stdout) URL() string { return "-" }

// Finish implements Sink: standard output has nothing to finish.
func (s *Stdout) Finish(context.Context, *Finish) error { return nil }

// Open implements Sink.
func (s *Stdout) Open(_ context.Context, _ *Split, from Watermark, ack Ack) (SplitWriter, Watermark, error) {
	return &stdoutSplit{s: s, ack: ack, last: s.now()}, from, nil
}

func (s *Stdout) write(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return s.failed
	}
	if _, err := s.w.Write(b); err != nil {
		s.failed = errcode.E("write", "standard output", ErrSink, err)
	}
	return s.failed
}

// flush writes out what is buffered: once it returns nil, every record written before is
// with the reader of standard output.
func (s *Stdout) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		if err := s.w.Flush(); err != nil {
			s.failed = errcode.E("write", "standard output", ErrSink, err)
		}
	}
	return s.failed
}

type stdoutSplit struct {
	s    *Stdout
	ack  Ack
	last time.Time
	end  Watermark
	some bool
}

func (w *stdoutSplit) Write(ctx context.Context, b *Batch) error {
	err := w.s.write(b.Data)
	end := b.End
	b.recycle()
	if err != nil {
		return err
	}
	w.end, w.some = end, true
	if now := w.s.now(); now.Sub(w.last) >= w.s.every {
		w.last = now
		if err := w.s.flush(); err != nil {
			return err
		}
		return w.ack(ctx, end)
	}
	return nil
}

func (w *stdoutSplit) Close(context.Context) (*PartInfo, error) { return nil, w.s.flush() }

func (w *stdoutSplit) Abort() {}
