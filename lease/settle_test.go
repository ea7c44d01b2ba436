package lease

import (
	"errors"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/faultproxy"
)

// A commit whose record write landed, but whose answer was lost and whose read-back hung
// past the holder's deadline, is committed: the log reads its entry. Commit must say so
// (returning the entry), not report a commit refused past the deadline, which a job takes
// for one that changed nothing (an export then never writes the manifest its committed
// entry certifies, while its delta cursor has already moved past the run's rows).
func TestMinIOCommitLandedAsItsDeadlinePassedIsCommitted(t *testing.T) {
	px, h, cut := cutNextRecordWrite(t)
	e, err := h.Commit(ctx, "k", "v1")
	cut()
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

// A save whose record write landed, but whose answer was lost and whose read-back hung past
// the holder's deadline, may have landed: Save says so (ErrMayHaveLanded beside
// ErrDeadlinePassed), never that it changed nothing, and the next holder finds the state it
// saved. A write refused before it was sent (the deadline already passed) says nothing of
// the kind.
func TestMinIOSaveCutInFlightMayHaveLanded(t *testing.T) {
	px, h, cut := cutNextRecordWrite(t)
	err := h.Save(ctx, "s1")
	cut()
	if !errors.Is(err, ErrDeadlinePassed) || !errors.Is(err, ErrMayHaveLanded) {
		t.Fatalf("Save cut in flight = %v, want ErrDeadlinePassed and ErrMayHaveLanded", err)
	}
	if err := h.Save(ctx, "s2"); !errors.Is(err, ErrNotHeld) || errors.Is(err, ErrMayHaveLanded) {
		t.Fatalf("a save after the lease was lost = %v, want ErrNotHeld without ErrMayHaveLanded", err)
	}
	b := realNode(t, px.open, "b", 5*time.Second)
	h2, err := b.Acquire(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(h2.State()); got != `"s1"` {
		t.Fatalf("the next holder found state %s, want the cut save's \"s1\"", got)
	}
}

// cutNextRecordWrite acquires lease "orders" through a fault proxy before MinIO and makes the
// holder's next write of the record land with its answer lost and its read-back hung past the
// holder's deadline. cut, called after that write, fails t unless both faults fired.
func cutNextRecordWrite(t *testing.T) (px proxied, h *Lease, cut func()) {
	t.Helper()
	px = newProxied(t, nil)
	h, err := realNode(t, px.viaProxy, "a", 0).Acquire(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	lost := px.proxy.Inject(faultproxy.Rule{Method: "PUT", Path: LeasePrefix, Fault: faultproxy.Lost, Times: 1})
	hung := px.proxy.Inject(faultproxy.Rule{Method: "HEAD", Path: LeasePrefix, Fault: faultproxy.Stall, Delay: 5 * time.Second, Times: 1})
	return px, h, func() {
		t.Helper()
		if lost.Fired() != 1 || hung.Fired() != 1 {
			t.Fatalf("the faults fired %d and %d times", lost.Fired(), hung.Fired())
		}
	}
}
