package lease

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/internal/faultproxy"
)

// A commit whose record write landed, but whose answer was lost and whose read-back hung
// past the holder's deadline, is committed: the log reads its entry. Commit must say so
// (returning the entry), not report a commit refused past the deadline, which a job takes
// for one that changed nothing (an export then never writes the manifest its committed
// entry certifies, while its delta cursor has already moved past the run's rows).
func TestMinIOCommitLandedAsItsDeadlinePassedIsCommitted(t *testing.T) {
	px := newProxied(t, nil)
	a := realNode(t, px.viaProxy, "a", 0)
	h, err := a.Acquire(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	lost := px.proxy.Inject(faultproxy.Rule{Method: "PUT", Path: LeasePrefix, Fault: faultproxy.Lost, Times: 1})
	hung := px.proxy.Inject(faultproxy.Rule{Method: "HEAD", Path: LeasePrefix, Fault: faultproxy.Stall, Delay: 5 * time.Second, Times: 1})
	e, err := h.Commit(ctx, "k", "v1")
	if lost.Fired() != 1 || hung.Fired() != 1 {
		t.Fatalf("the faults fired %d and %d times", lost.Fired(), hung.Fired())
	}
	head, rerr := OpenLog(px.open, "orders").Head(ctx, "k")
	if rerr != nil {
		t.Fatal(rerr)
	}
	committed := head != nil && head.Seq == 1 && head.Fence == h.Fence() && string(head.Data) == `"v1"`
	switch {
	case !committed:
		t.Fatalf("the record's write did not land (head %+v); the test needs it to", head)
	case err != nil:
		t.Fatalf("the log reads the commit's entry %s, and Commit said: %v", head.Key, err)
	case e == nil || e.Key != head.Key:
		t.Fatalf("Commit returned %+v, the log's head is %s", e, head.Key)
	}
}

// lateRecord is a cas.Store whose next write of a lease record reaches the store but is
// applied late: its sender is told nothing (the write is cut at the holder's deadline, the
// clock moved past it, or its answer is lost), and the write is applied after the next read
// of the record returns, or before the next write of it (a settling write then finds it
// there); with afterWrite, only after the next write (which takes its revision first). Every
// write of it stays conditional. With down, every request after it fails.
type lateRecord struct {
	cas.Store
	clock      *fakeClock // cut: the clock is moved past the holder's deadline while the write is out
	cut        bool
	afterWrite bool
	down       bool

	mu      sync.Mutex
	armed   bool
	out     bool // the write was held: down applies
	pending func()
}

var errDown = errors.New("connection refused")

func (s *lateRecord) isDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down && s.out
}

func (s *lateRecord) apply() {
	s.mu.Lock()
	f := s.pending
	s.pending = nil
	s.mu.Unlock()
	if f != nil {
		f()
	}
}

func (s *lateRecord) Get(ctx context.Context, key string) ([]byte, string, error) {
	if s.isDown() {
		return nil, "", errDown
	}
	if !s.afterWrite {
		defer s.apply()
	}
	return s.Store.Get(ctx, key)
}

func (s *lateRecord) Update(ctx context.Context, key string, v []byte, rev string) (string, error) {
	if s.isDown() {
		return "", errDown
	}
	s.mu.Lock()
	prev := s.pending
	s.pending = nil
	s.mu.Unlock()
	if prev != nil && s.afterWrite {
		defer prev()
	} else if prev != nil {
		prev()
	}
	s.mu.Lock()
	hold := s.armed && strings.HasPrefix(key, LeasePrefix)
	if hold {
		s.armed, s.out = false, true
		s.pending = func() { _, _ = s.Store.Update(context.Background(), key, v, rev) }
	}
	s.mu.Unlock()
	if !hold {
		return s.Store.Update(ctx, key, v, rev)
	}
	if s.cut {
		s.clock.Advance(time.Minute) // past the deadline: bound cancels the request
		<-ctx.Done()
		return "", ctx.Err()
	}
	return "", fmt.Errorf("update %s: %w", key, errors.New("connection reset after the request was sent"))
}

// A commit or save whose record write reaches the store but is applied only after the
// holder's next read of the record (cut at the holder's deadline, or its answer lost) answers
// what the next reader finds: a commit whose entry is the log's head returns it, a save whose
// state the record holds returns nil. Neither reports a write that changed nothing.
func TestLateAppliedRecordWriteIsAnsweredTruthfully(t *testing.T) {
	for _, op := range []string{"commit", "save"} {
		for _, cut := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/cut=%v", op, cut), func(t *testing.T) {
				kv := &lateRecord{Store: cas.NewMemory(), clock: newClock(epoch), cut: cut}
				landed, err := lateWrite(t, kv, op)
				if !landed {
					t.Fatal("the late write did not land; the test needs it to")
				}
				if err != nil {
					t.Fatalf("the record holds the %s, and it said: %v", op, err)
				}
			})
		}
	}
}

// A settling write that reaches the store before the cut write takes its revision: the cut
// write never lands, whenever it is applied, and the op fails without ErrMayHaveLanded.
func TestSettlingWriteTakesTheCutWritesRevision(t *testing.T) {
	for _, op := range []string{"commit", "save"} {
		t.Run(op, func(t *testing.T) {
			kv := &lateRecord{Store: cas.NewMemory(), clock: newClock(epoch), cut: true, afterWrite: true}
			landed, err := lateWrite(t, kv, op)
			switch {
			case landed:
				t.Fatalf("the cut write landed after the settling write (%v)", err)
			case err == nil || errors.Is(err, ErrMayHaveLanded):
				t.Fatalf("the %s did not land, and it said: %v", op, err)
			}
			wantCode(t, err, ErrDeadlinePassed)
		})
	}
}

// A cut write that cannot be settled (the store no longer answers) fails ErrMayHaveLanded,
// and the lease is lost.
func TestUnsettledWriteMayHaveLanded(t *testing.T) {
	for _, op := range []string{"commit", "save", "release"} {
		t.Run(op, func(t *testing.T) {
			kv := &lateRecord{Store: cas.NewMemory(), clock: newClock(epoch), down: true}
			h := armedLease(t, kv)
			err := doLate(h, op)
			wantCode(t, err, ErrMayHaveLanded)
			if h.Err() == nil {
				t.Fatal("the lease is still held")
			}
		})
	}
}

// A release cut at the deadline is settled by sending it again: released either way.
func TestCutReleaseIsSettledReleased(t *testing.T) {
	for _, afterWrite := range []bool{false, true} {
		t.Run(fmt.Sprintf("afterWrite=%v", afterWrite), func(t *testing.T) {
			kv := &lateRecord{Store: cas.NewMemory(), clock: newClock(epoch), cut: true, afterWrite: afterWrite}
			h := armedLease(t, kv)
			if err := h.ReleaseWith(ctx, "done"); err != nil {
				t.Fatalf("release: %v", err)
			}
			kv.apply()
			rec, _, _, err := OpenLogCAS(kv, "orders").Lease(ctx)
			if err != nil || !rec.Released || string(rec.State) != `"done"` {
				t.Fatalf("record %+v, %v: want released with its state", rec, err)
			}
		})
	}
}

// armedLease acquires "orders" over kv, whose next write of the record is then held.
func armedLease(t *testing.T, kv *lateRecord) *Lease {
	t.Helper()
	l, err := OpenCAS(kv, testConfig("a"), &Options{Clock: kv.clock})
	if err != nil {
		t.Fatal(err)
	}
	h, err := l.Acquire(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	kv.mu.Lock()
	kv.armed = true
	kv.mu.Unlock()
	return h
}

// doLate runs op (commit "v1", save "s1", release) on h.
func doLate(h *Lease, op string) error {
	switch op {
	case "commit":
		_, err := h.Commit(ctx, "k", "v1")
		return err
	case "save":
		return h.Save(ctx, "s1")
	}
	return h.Release(ctx)
}

// lateWrite runs a commit or save whose record write kv holds, then lets it land if it still
// can, and reports whether the record holds it, and what the op said. A commit that says
// nil must have returned the log's head.
func lateWrite(t *testing.T, kv *lateRecord, op string) (bool, error) {
	t.Helper()
	h := armedLease(t, kv)
	var e *Entry
	var err error
	if op == "commit" {
		e, err = h.Commit(ctx, "k", "v1")
	} else {
		err = h.Save(ctx, "s1")
	}
	kv.apply() // had nothing read or written it since, it lands now (if its condition holds)
	rec, _, _, rerr := OpenLogCAS(kv, "orders").Lease(ctx)
	if rerr != nil {
		t.Fatal(rerr)
	}
	landed := rec.Seq == 1 && rec.Fence == h.Fence()
	if op == "save" {
		landed = string(rec.State) == `"s1"`
	}
	switch {
	case !landed && err == nil:
		t.Fatalf("the %s said nil, and the record does not hold it: %+v", op, rec)
	case landed && err == nil && op == "commit" && (e == nil || e.Key != rec.Head):
		t.Fatalf("commit returned %+v, the log's head is %s", e, rec.Head)
	}
	t.Logf("landed %v: %v", landed, err)
	return landed, err
}
