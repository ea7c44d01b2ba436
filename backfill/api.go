package backfill

import (
	"context"
	"sync"
)

// Consumer is the Sink of a program that takes the records itself. Run the job in one
// goroutine and call Next in others: each Delivery is a batch of one split's records, in
// order within its split (batches of different splits interleave), each record with its
// offset (Batch.Offset). Commit acknowledges a delivery and every earlier one of its split,
// and returns once the split's watermark is committed in the coordinator: those records are
// never delivered again. A worker that stops before committing leaves the records after its
// last commit to be delivered again, by whichever worker resumes the split (at-least-once).
// A split is done once its last delivery is committed; a delivery may hold no records (the
// end of an object), and is committed like any other.
type Consumer struct {
	name string
	ch   chan *Delivery
}

// NewConsumer returns a Consumer; name is the sink's name in the job's plan (the same on
// every worker of the job).
func NewConsumer(name string) *Consumer { return &Consumer{name: name, ch: make(chan *Delivery)} }

// URL implements Sink.
func (c *Consumer) URL() string { return c.name }

// Finish implements Sink.
func (c *Consumer) Finish(context.Context, *Finish) error { return nil }

// Next returns the next delivery, waiting for one until ctx ends.
func (c *Consumer) Next(ctx context.Context) (*Delivery, error) {
	select {
	case d := <-c.ch:
		return d, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Open implements Sink.
func (c *Consumer) Open(_ context.Context, _ *Split, from Watermark, ack Ack) (SplitWriter, Watermark, error) {
	s := &consumerSplit{c: c, ack: ack, committed: from, last: from, changed: make(chan struct{})}
	return s, from, nil
}

// Delivery is one batch handed to the program.
type Delivery struct {
	*Batch
	s *consumerSplit
}

// Commit acknowledges the delivery and every earlier one of its split. It fails with
// ErrLeaseLost when another worker took the split over (its records after the last commit
// are delivered again there).
func (d *Delivery) Commit(ctx context.Context) error { return d.s.commit(ctx, d.End) }

type consumerSplit struct {
	c   *Consumer
	ack Ack

	mu        sync.Mutex
	committed Watermark
	last      Watermark
	changed   chan struct{}
}

func (s *consumerSplit) Write(ctx context.Context, b *Batch) error {
	s.mu.Lock()
	s.last = b.End
	s.mu.Unlock()
	select {
	case s.c.ch <- &Delivery{Batch: b, s: s}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (s *consumerSplit) commit(ctx context.Context, wm Watermark) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !after(wm, s.committed) {
		return nil
	}
	if err := s.ack(ctx, wm); err != nil {
		return err
	}
	s.committed = wm
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

// after reports whether a is past b.
func after(a, b Watermark) bool {
	return a.Member > b.Member || a.Member == b.Member && a.Record > b.Record
}

// Close waits until the last delivery is committed.
func (s *consumerSplit) Close(ctx context.Context) (*PartInfo, error) {
	for {
		s.mu.Lock()
		done, ch := !after(s.last, s.committed), s.changed
		s.mu.Unlock()
		if done {
			return nil, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

func (s *consumerSplit) Abort(context.Context) {}
