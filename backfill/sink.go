package backfill

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
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

// claimer is a Sink that is a dataset of its own (the store sink): Claim says, before the
// job reads anything, whether job, reading source, may write it.
type claimer interface {
	Claim(ctx context.Context, job, source string) error
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
	// Abort ends the split before its end: a bad object failed it (it is handed back), its
	// lease was lost, or the worker stops. A sink that writes parts drops the part; a
	// streaming sink first acknowledges what its reader has received (waiting for it until
	// ctx ends), so that the split's next attempt does not deliver that again.
	Abort(ctx context.Context)
}

// Finish is what a sink learns when a job ends.
type Finish struct {
	Plan     *Plan
	Splits   []*Split      // in plan order
	States   []*SplitState // in plan order
	Error    error         // the job's failure (ErrQuarantined), or nil
	Finished time.Time     // the latest time a split finished: the same on every worker
}

// Stdout writes every record as one line to w, batches of different splits interleaved. A
// record counts as delivered, and its split's watermark may be committed past it, only once
// the reader of w has received it:
//
//   - a w that tells how many of the bytes written to it its reader has not taken yet
//     (Unreader: a pipe, whose unread bytes Linux reports) has only what the reader took
//     acknowledged;
//   - a w that makes its writes durable (Syncer: a regular file) is synced before a commit;
//   - any other w (a terminal, a socket, a buffer) has a record counted once it is written
//     to it: what a socket's buffers held when its reader went away is lost to it.
//
// A split's watermark is committed every commit interval (the records received by then), at
// its end (waiting until the reader has taken its last record), and when a bad object stops
// it (what the reader received, so that the next attempt does not repeat it). After a write
// error nothing more is acknowledged: the records since the last commit are delivered again
// when the job runs again. Delivery is at-least-once: a split resumed elsewhere repeats the
// records received after its last commit.
type Stdout struct {
	mu      sync.Mutex
	w       *bufio.Writer
	unread  func() (int, error) // nil: every byte written is received
	sync    func() error        // nil: nothing to sync
	written int64               // bytes given to w (some perhaps still in the buffer)
	every   time.Duration
	now     func() time.Time
	failed  error
}

// Unreader is a writer that knows how many of the bytes written to it its reader has not
// taken yet; an error means the reader is gone.
type Unreader interface {
	io.Writer
	Unread() (int, error)
}

// Syncer is a writer whose writes are made durable by Sync.
type Syncer interface {
	io.Writer
	Sync() error
}

// NewStdout returns the sink writing to w, acknowledging every interval. w is asked, once,
// whether it is an Unreader or a Syncer.
func NewStdout(w io.Writer, interval time.Duration) *Stdout {
	// A batch of the size the reader cuts goes to w in one write, straight from its buffer;
	// the buffer only gathers small batches (the records of small objects).
	s := &Stdout{w: bufio.NewWriterSize(w, 64<<10), every: interval, now: time.Now}
	switch x := w.(type) {
	case Unreader:
		s.unread = x.Unread
	case Syncer:
		s.sync = x.Sync
	}
	return s
}

// URL implements Sink.
func (s *Stdout) URL() string { return "-" }

// Finish implements Sink: standard output has nothing to finish.
func (s *Stdout) Finish(context.Context, *Finish) error { return nil }

// Open implements Sink.
func (s *Stdout) Open(_ context.Context, _ *Split, from Watermark, ack Ack) (SplitWriter, Watermark, error) {
	return &stdoutSplit{s: s, ack: ack, last: s.now()}, from, nil
}

// write gives b to w and returns where it ends in the stream.
func (s *Stdout) write(b []byte) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return 0, s.failed
	}
	if _, err := s.w.Write(b); err != nil {
		s.fail(err)
		return 0, s.failed
	}
	s.written += int64(len(b))
	return s.written, nil
}

// fail records the stream's failure: nothing is acknowledged from now on.
func (s *Stdout) fail(err error) {
	if errors.Is(err, syscall.EPIPE) {
		err = fmt.Errorf("its reader closed it: %w", err)
	}
	s.failed = errcode.E("write", "standard output", ErrSink, err)
}

// received flushes what is buffered and returns how far into the stream the reader has
// taken every byte. With wait it waits (polling, until ctx ends) until that is at least
// target.
func (s *Stdout) received(ctx context.Context, target int64, wait bool) (int64, error) {
	pause := 20 * time.Microsecond
	for {
		got, err := s.taken()
		if err != nil || got >= target || !wait {
			return got, err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return got, context.Cause(ctx)
		case <-t.C:
		}
		pause = min(2*pause, 2*time.Millisecond)
	}
}

func (s *Stdout) taken() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return 0, s.failed
	}
	if err := s.w.Flush(); err != nil {
		s.fail(err)
		return 0, s.failed
	}
	switch {
	case s.sync != nil:
		if err := s.sync(); err != nil {
			s.fail(fmt.Errorf("sync: %w", err))
			return 0, s.failed
		}
	case s.unread != nil:
		n, err := s.unread()
		if err != nil {
			s.fail(err)
			return 0, s.failed
		}
		return s.written - int64(n), nil
	}
	return s.written, nil
}

// stdoutSplit is one split's records on standard output; marks are its batches written
// since its last commit: where each ends in the stream, and the watermark after it.
type stdoutSplit struct {
	s     *Stdout
	ack   Ack
	last  time.Time
	marks []mark
}

type mark struct {
	pos int64
	wm  Watermark
}

func (w *stdoutSplit) Write(ctx context.Context, b *Batch) error {
	pos, err := w.s.write(b.Data)
	end := b.End
	b.recycle()
	if err != nil {
		return err
	}
	w.marks = append(w.marks, mark{pos, end})
	if now := w.s.now(); now.Sub(w.last) >= w.s.every {
		w.last = now
		return w.commit(ctx, false)
	}
	return nil
}

// commit acknowledges the split's records the reader has received; with wait, once it has
// received every one written (or ctx ended).
func (w *stdoutSplit) commit(ctx context.Context, wait bool) error {
	if len(w.marks) == 0 {
		return nil
	}
	got, err := w.s.received(ctx, w.marks[len(w.marks)-1].pos, wait)
	if err != nil {
		return err
	}
	n := 0
	for n < len(w.marks) && w.marks[n].pos <= got {
		n++
	}
	if n == 0 {
		return nil
	}
	wm := w.marks[n-1].wm
	w.marks = append(w.marks[:0], w.marks[n:]...)
	return w.ack(ctx, wm)
}

// Close returns once the reader has received every record of the split.
func (w *stdoutSplit) Close(ctx context.Context) (*PartInfo, error) {
	if len(w.marks) == 0 {
		return nil, nil
	}
	if _, err := w.s.received(ctx, w.marks[len(w.marks)-1].pos, true); err != nil {
		return nil, err
	}
	w.marks = nil
	return nil, nil
}

// Abort acknowledges what the reader received: all of the split's records written when it
// takes them before ctx ends, else those it had taken by then.
func (w *stdoutSplit) Abort(ctx context.Context) {
	if err := w.commit(ctx, true); err == nil || ctx.Err() == nil {
		return
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = w.commit(actx, false)
}
