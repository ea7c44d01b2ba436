package spool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/wharfdata/wharf/errcode"
)

// Group commit. The owner's uploaded records are made durable in groups. Each Uploaded call
// queues a request; the first caller to find no group under way leads one: holding the
// catalog lock, it takes every request queued by then, appends their records in one write
// (after the deleted records of the removals made since the last write), fsyncs the catalog
// once, applies the records and wakes the callers. Whoever finds its request still waiting
// when a group ends leads the next one. A caller returns only after a catalog fsync that
// covers its own record, exactly as if it had committed alone, and a failed write or fsync
// fails every request whose record it carried (none of them stays in the catalog).
//
// A removal (Remove) costs no fsync of its own. What the delivery guarantee needs is that a
// file is unlinked only after its uploaded record is durable, and Remove checks exactly that
// (a file is in state Uploaded only once the fsync of its record returned). The unlink itself
// and the deleted record are not what anything relies on: after a crash that lost either,
// the file is back in ready/ recorded uploaded (local retention removes it again), or gone
// with no deleted record (Remove of a missing file records it deleted), or back in ready/
// recorded deleted (Open removes it as a file the catalog does not hold). So Remove unlinks
// the file, without fsyncing the directory, and leaves its deleted record to the next catalog
// write, which fsyncs it with its own records; Refresh and Close write what is left.

const opUploaded = "uploaded"

// commitReq is one Uploaded call waiting for a group commit.
type commitReq struct {
	op                 string // opUploaded
	id                 uint64
	key, etag, outcome string        // the uploaded record
	err                error         // the outcome; set before done is closed
	done               chan struct{} // closed once the request is settled
}

// syncCatalog fsyncs the catalog after a write. The tests replace it to count the fsyncs, to
// hold a group open while others queue behind it, or to make one fail.
var syncCatalog = (*os.File).Sync

// commit queues req and returns once it is settled. ctx bounds only the wait in the queue:
// once a group has taken the request, its write and fsync are under way and commit sees them
// through.
func (s *Spool) commit(ctx context.Context, req *commitReq) error {
	req.done = make(chan struct{})
	s.gmu.Lock()
	s.queue = append(s.queue, req)
	s.gmu.Unlock()
	cancel := ctx.Done()
	for {
		select {
		case <-req.done:
			return req.err
		case s.lead <- struct{}{}:
			select {
			case <-req.done:
			default:
				if s.groupDelay > 0 {
					time.Sleep(s.groupDelay) // the calls coming meanwhile join this group
				}
				s.leadGroup()
			}
			<-s.lead
		case <-cancel:
			if s.dequeue(req) {
				return ctx.Err()
			}
			cancel = nil // a group has taken it: see it through
		}
	}
}

// dequeue takes req out of the queue; false if a leader has taken it already.
func (s *Spool) dequeue(req *commitReq) bool {
	s.gmu.Lock()
	defer s.gmu.Unlock()
	for i, r := range s.queue {
		if r == req {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			return true
		}
	}
	return false
}

// takeQueue empties the queue into a group.
func (s *Spool) takeQueue() []*commitReq {
	s.gmu.Lock()
	defer s.gmu.Unlock()
	group := s.queue
	s.queue = nil
	return group
}

// leadGroup runs one group commit and settles every request it takes.
func (s *Spool) leadGroup() {
	s.mu.Lock()
	defer s.mu.Unlock()
	var group []*commitReq
	var err error
	if s.closed {
		group = s.takeQueue()
		err = newErr("commit", s.info.Dir, ErrState, errors.New("the spool is closed"))
	} else {
		// The wait for the lock is not the leader's alone: it is bounded like Open's, not by
		// the leader's context.
		ctx, cancel := context.WithTimeout(context.Background(), catalogLockWait)
		taken := false
		err = s.locked(ctx, "commit", func() error {
			group, taken = s.takeQueue(), true
			if err := s.catchUp("commit"); err != nil {
				return err
			}
			return s.writeGroup(group)
		})
		cancel()
		if !taken {
			group = s.takeQueue()
		}
	}
	for _, r := range group {
		if r.err == nil && err != nil {
			r.err = asOp(err, r.op)
		}
		close(r.done)
	}
}

// asOp names op in a spool error shared by a group, so that each caller reads its own
// operation.
func asOp(err error, op string) error {
	if e, ok := err.(*errcode.Error); ok && e.Op != op {
		c := *e
		c.Op = op
		return &c
	}
	return err
}

// writeGroup commits a group (the catalog lock held, the catalog read to its end): the
// deferred deleted records and the uploaded records of its requests, in one write and one
// fsync. A request that fails on its own (its file in the wrong state) gets its error and no
// record; the error returned is the shared write's or fsync's, and fails the requests whose
// records it carried.
func (s *Spool) writeGroup(group []*commitReq) error {
	now := time.Now().UTC()
	inGroup := map[uint64]bool{}
	var recs []*record
	var lens []int
	var buf bytes.Buffer
	for _, r := range group {
		if err := s.check(r, inGroup); err != nil {
			r.err = err
			continue
		}
		rec := &record{Type: recUploaded, ID: r.id, Key: r.key, ETag: r.etag, Outcome: r.outcome, At: now}
		b, err := rec.line()
		if err != nil {
			r.err = newErr(r.op, s.rd.path, ErrIO, err)
			continue
		}
		inGroup[r.id] = true
		buf.Write(b)
		recs, lens = append(recs, rec), append(lens, len(b))
	}
	if len(recs) == 0 {
		return nil
	}
	if err := s.writeDeferred("commit", buf.Bytes()); err != nil {
		return err
	}
	for i, rec := range recs {
		if err := s.rd.st.apply(rec); err != nil {
			return lineErr("commit", s.rd.path, s.rd.line+1, err)
		}
		s.rd.off += int64(lens[i])
		s.rd.line++
	}
	return nil
}

// writeDeferred writes the deferred deleted records, then more (lines the caller applies
// itself, after), in one write and one fsync (the catalog lock held, the catalog read to its
// end, mu held). It does nothing when there is nothing to write. On failure nothing of it
// stays in the catalog and the deleted records stay deferred.
func (s *Spool) writeDeferred(op string, more []byte) error {
	if len(s.deferred) == 0 && len(more) == 0 {
		return nil
	}
	if err := s.cutTorn(op); err != nil {
		return err
	}
	lines := s.deferred
	if len(more) > 0 {
		lines = append(append(make([]byte, 0, len(s.deferred)+len(more)), s.deferred...), more...)
	}
	if err := appendSynced(s.cat, s.rd.off, lines); err != nil {
		return ioErr(op, s.rd.path, err)
	}
	s.rd.off += int64(len(s.deferred))
	s.rd.line += s.deferredN
	s.deferred, s.deferredN = s.deferred[:0], 0
	s.reserve()
	return nil
}

// check checks that r's file is eligible, and not recorded by another request of the group.
func (s *Spool) check(r *commitReq, inGroup map[uint64]bool) error {
	if inGroup[r.id] {
		return newErr(r.op, s.rd.st.files[r.id].Path, ErrState,
			fmt.Errorf("file %d is being recorded uploaded by another call", r.id))
	}
	return s.want(r.op, r.id, Eligible)
}

// Remove is local retention: it removes the ready file of id, whose uploaded record must be
// durable already, and records it deleted. The file is unlinked before Remove returns; its
// deleted record is written by the next catalog write (the next group of Uploaded, Refresh or
// Close), with that write's fsync: neither the unlink nor the record needs a durability of
// its own (see the top of group.go), so Remove costs no fsync. A file already gone from
// ready/ is recorded deleted all the same. Errors: ErrState (the file is not recorded
// uploaded, durably: it is never removed; or the spool is closed), ErrIO, store.ErrForbidden,
// ctx's error.
func (s *Spool) Remove(ctx context.Context, id uint64) error {
	const op = "remove"
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return newErr(op, s.info.Dir, ErrState, errors.New("the spool is closed"))
	}
	if err := s.want(op, id, Uploaded); err != nil {
		return err
	}
	f := s.rd.st.files[id]
	if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ioErr(op, f.Path, err)
	}
	rec := &record{Type: recDeleted, ID: id, At: time.Now().UTC()}
	b, err := rec.line()
	if err != nil {
		return newErr(op, f.Path, ErrIO, err)
	}
	if err := s.rd.st.apply(rec); err != nil {
		return newErr(op, f.Path, ErrState, err)
	}
	s.deferred = append(s.deferred, b...)
	s.deferredN++
	return nil
}

// cutTorn truncates a torn last line away before the owner appends (the catalog lock held).
func (s *Spool) cutTorn(op string) error {
	t := s.rd.torn
	if t == nil {
		return nil
	}
	if err := truncSync(s.cat, s.rd.off); err != nil {
		return ioErr(op, s.rd.path, err)
	}
	s.log.Warn("spool: removed the torn last record of the catalog", "path", s.rd.path, "line", t.Line)
	s.rd.torn = nil
	return nil
}

// appendSynced writes lines at the end of f (O_APPEND, the lock held, end its size) and
// fsyncs it once. On failure it truncates f back to end, so no record of the group stays.
func appendSynced(f *os.File, end int64, lines []byte) error {
	_, err := f.Write(lines)
	if err == nil {
		err = syncCatalog(f)
	}
	if err != nil {
		return undo(f, end, err)
	}
	return nil
}
