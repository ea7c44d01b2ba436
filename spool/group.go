package spool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/wharfdata/wharf/errcode"
)

// Group commit. The owner's own records (uploaded after an upload, deleted after local
// retention) are made durable in groups. Each Uploaded or Remove call queues a request; the
// first caller to find no group under way leads one: holding the catalog lock, it takes every
// request queued by then, appends their records in one write, fsyncs the catalog once, applies
// the records and wakes the callers. Whoever finds its request still waiting when a group
// ends leads the next one. A caller returns only after a catalog fsync that covers its own
// record, exactly as if it had committed alone, and a failed write or fsync fails every
// request whose record it carried (none of them stays in the catalog).
//
// A Remove takes two groups. The first removes the file and starts the fsync of its
// directory, which runs while that group's catalog write is fsynced (one directory fsync for
// all the removals of the group); the next group waits for it, and only then writes the
// deleted record. So a deleted record is never written before its file's removal is durable,
// and a group costs about one fsync's time, not two.

const (
	opUploaded = "uploaded"
	opRemove   = "remove"
)

// commitReq is one Uploaded or Remove call waiting for a group commit.
type commitReq struct {
	op                 string // opUploaded or opRemove
	id                 uint64
	key, etag, outcome string        // opUploaded
	err                error         // the outcome; set before done is closed
	done               chan struct{} // closed once the request is settled

	// A removal is unlinked by one group (its file removed, its directory being fsynced) and
	// recorded by the next (its deleted record written, or its error settled).
	unlinked, recorded bool
}

// syncCatalog fsyncs the catalog after a group's write. The tests replace it to count the
// fsyncs, to hold a group open while others queue behind it, or to make one fail.
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
			// Leaders settle, or carry on to the next group, all they take before letting go
			// of the lead: a request not settled now is queued or waits for its deleted
			// record, and the group led here moves it on.
			select {
			case <-req.done:
			default:
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

// unlinked is the removals of the last group: their files are removed and their directories
// being fsynced; their deleted records go in the next group's write.
type unlinked struct {
	reqs []*commitReq
	done chan struct{} // closed once the directory fsyncs are over (their errors set on reqs)
}

// leadGroup runs one group commit: it settles the removals the last group left waiting for
// their deleted records, and every request it takes, but for its own removals, which it
// leaves to the next group.
func (s *Spool) leadGroup() {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.unlinked
	s.unlinked = nil
	if prev != nil {
		<-prev.done
	}
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
			return s.writeGroup(group, prev)
		})
		cancel()
		if !taken {
			group = s.takeQueue()
		}
	}
	for _, r := range append(group, reqsOf(prev)...) {
		if r.unlinked && !r.recorded {
			continue // this group's removal: the next group records it
		}
		if r.err == nil && err != nil {
			r.err = asOp(err, r.op)
		}
		close(r.done)
	}
}

func reqsOf(u *unlinked) []*commitReq {
	if u == nil {
		return nil
	}
	return u.reqs
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
// uploaded records of its requests and the deleted records of prev, the last group's
// removals (their directories fsynced by now), in one write and one fsync. It removes the
// files of the group's own removals and starts fsyncing their directories (s.unlinked), for
// the next group to record. A request that fails on its own (its file in the wrong state, a
// removal or a directory fsync that failed) gets its error and no record; the error returned
// is the shared write's or fsync's, and fails the requests whose records it carried.
func (s *Spool) writeGroup(group []*commitReq, prev *unlinked) error {
	now := time.Now().UTC()
	inGroup := map[uint64]State{} // the state each accepted request moves its file to
	for _, r := range reqsOf(prev) {
		inGroup[r.id] = Deleted
	}
	var removes []*commitReq
	var recs []*record
	var lens []int
	var buf bytes.Buffer
	add := func(r *commitReq, rec *record) {
		b, err := rec.line()
		if err != nil {
			r.err = newErr(r.op, s.rd.path, ErrIO, err)
			return
		}
		buf.Write(b)
		recs, lens = append(recs, rec), append(lens, len(b))
	}
	for _, r := range reqsOf(prev) {
		r.recorded = true
		if r.err == nil {
			add(r, &record{Type: recDeleted, ID: r.id, At: now})
		}
	}
	for _, r := range group {
		if err := s.check(r, inGroup); err != nil {
			r.err = err
			continue
		}
		if r.op == opRemove {
			inGroup[r.id] = Deleted
			removes = append(removes, r)
			continue
		}
		inGroup[r.id] = Uploaded
		add(r, &record{Type: recUploaded, ID: r.id, Key: r.key, ETag: r.etag, Outcome: r.outcome, At: now})
	}
	s.unlinked = s.removeFiles(removes)
	if len(recs) == 0 {
		return nil
	}
	if err := s.cutTorn("commit"); err != nil {
		return err
	}
	if err := appendSynced(s.cat, s.rd.off, buf.Bytes()); err != nil {
		return ioErr("commit", s.rd.path, err)
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

// check checks that r's file is in the state its record needs: eligible for an uploaded
// record; recorded uploaded (durably, before this group) for a removal.
func (s *Spool) check(r *commitReq, inGroup map[uint64]State) error {
	want := Eligible
	if r.op == opRemove {
		want = Uploaded
	}
	if st, ok := inGroup[r.id]; ok {
		return newErr(r.op, s.rd.st.files[r.id].Path, ErrState,
			fmt.Errorf("file %d is being recorded %s by another call, not %s", r.id, st, want))
	}
	return s.want(r.op, r.id, want)
}

// removeFiles removes the ready files of a group's removals and starts fsyncing each of their
// directories once, in the background; nil if there are none. A request whose removal or
// directory fsync failed gets the error.
func (s *Spool) removeFiles(removes []*commitReq) *unlinked {
	var dirs []string
	byDir := map[string][]*commitReq{}
	u := &unlinked{done: make(chan struct{})}
	for _, r := range removes {
		f := s.rd.st.files[r.id]
		u.reqs = append(u.reqs, r)
		r.unlinked = true
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.err = ioErr(r.op, f.Path, err)
			continue
		}
		dir := filepath.Dir(f.Path)
		if byDir[dir] == nil {
			dirs = append(dirs, dir)
		}
		byDir[dir] = append(byDir[dir], r)
	}
	if len(u.reqs) == 0 {
		return nil
	}
	go func() {
		defer close(u.done)
		for _, dir := range dirs {
			if err := syncRemoved(dir); err != nil {
				for _, r := range byDir[dir] {
					r.err = asOp(ioErr(r.op, dir, err), r.op)
				}
			}
		}
	}()
	return u
}

// syncRemoved fsyncs a directory that removals changed. The tests replace it to fail one or
// to see the order of the fsyncs.
var syncRemoved = syncDir

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
