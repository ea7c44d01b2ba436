package lease

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

var ctx = context.Background()

func TestAcquireCreatesLeaseAndRaisesPointer(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil)
	h := mustAcquire(t, a, "orders")
	if h.Fence() != 1 {
		t.Fatalf("fence %d, want 1", h.Fence())
	}
	rec, _ := recordIn(t, s, "orders")
	if rec.Holder != "a" || rec.Fence != 1 || rec.Released || rec.TTL() != 10*time.Second {
		t.Errorf("lease object %+v", rec)
	}
	p, found, err := OpenLog(s, "orders").Pointer(ctx)
	if err != nil || !found || p.Fence != 1 || p.Seq != 0 {
		t.Errorf("pointer %+v found %v err %v, want fence 1", p, found, err)
	}
}

func TestHeldNamesHolderAndThisMachinesExpiry(t *testing.T) {
	s := memStore()
	a, b := newMachine(t, s, "a", nil), newMachine(t, s, "b", nil)
	mustAcquire(t, a, "orders")
	b.clock.Advance(time.Hour)
	_, err := b.Acquire(ctx, "orders")
	var he *HeldError
	if !errors.As(err, &he) || !errors.Is(err, ErrHeld) {
		t.Fatalf("b: %v, want HeldError", err)
	}
	want := b.clock.Now().Add(12 * time.Second) // TTL + skew from b's first sight
	if he.Holder != "a" || he.Fence != 1 || !he.Until.Equal(want) {
		t.Errorf("held %+v, want holder a fence 1 until %s", he, want)
	}
	if errcode.Of(err).Exit() != errcode.ExitHeld || !strings.Contains(err.Error(), "held by node a") || he.Self {
		t.Errorf("exit %d, message %q", errcode.Of(err).Exit(), err)
	}
	_, err = a.Acquire(ctx, "orders")
	if !errors.As(err, &he) || !he.Self || !strings.Contains(err.Error(), "this node's own id") {
		t.Errorf("a again: %v, want held, naming its own id", err)
	}
}

func TestReleaseIsAReplaceAndTheNextFenceIsHigher(t *testing.T) {
	s := memStore()
	a, b := newMachine(t, s, "a", nil), newMachine(t, s, "b", nil)
	h := mustAcquire(t, a, "orders")
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	rec, _ := recordIn(t, s, "orders")
	if !rec.Released || rec.Fence != 1 {
		t.Fatalf("released lease object %+v: want it kept, released, fence 1", rec)
	}
	h2 := mustAcquire(t, b, "orders")
	if h2.Fence() != 2 {
		t.Errorf("fence %d after a release of fence 1, want 2", h2.Fence())
	}
	if err := h.Release(ctx); err != nil {
		t.Errorf("second release by the same holder: %v, want nil", err)
	}
}

// A contender takes a lease over only once it has seen the same version for TTL + skew on
// its own monotonic clock, whatever wall-clock times the holder wrote.
func TestTakeoverJudgedOnlyOnTheContendersMonotonicClock(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil)
	a.clock.wall = time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC) // a's wall clock is decades behind
	mustAcquire(t, a, "orders")

	short := newMachine(t, s, "b", func(c *Config) { c.Wait = 11 * time.Second })
	if _, err := short.Acquire(ctx, "orders"); !errors.Is(err, ErrHeld) {
		t.Fatalf("waiting 11 s < TTL + skew: %v, want held", err)
	}
	b := newMachine(t, s, "b", func(c *Config) { c.Wait = time.Minute })
	h := mustAcquire(t, b, "orders")
	if took := b.clock.Mono(); took < 12*time.Second || took > 13*time.Second {
		t.Errorf("took over after %s of b's clock, want 12 s (TTL + skew) and at most one poll more", took)
	}
	if h.Fence() != 2 {
		t.Errorf("fence %d, want 2", h.Fence())
	}
}

// A renewal seen while a contender watches restarts its watch.
func TestRenewalRestartsTheContendersWatch(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil)
	ha := mustAcquire(t, a, "orders")
	b := newMachine(t, s, "b", func(c *Config) { c.Wait = 20 * time.Second })
	renewed := false
	b.clock.onSleep = func(time.Duration) {
		if !renewed && b.clock.Mono() >= 8*time.Second {
			renewed = true
			if err := ha.Renew(ctx); err != nil {
				t.Error(err)
			}
		}
	}
	_, err := b.Acquire(ctx, "orders")
	var he *HeldError
	if !errors.As(err, &he) {
		t.Fatalf("b: %v, want held: a renewed at 8 s, so b's 20 s never saw one version for 12 s", err)
	}
	if !renewed {
		t.Fatal("a never renewed")
	}
}

// A holder's deadline is TTL − skew after the send of its last successful write: its own
// timer loses the lease there (Lost closes, with no request and no Keep running), and it
// never commits again, even with nobody else about.
func TestHolderPastItsDeadlineIsLostForGood(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil)
	h := mustAcquire(t, a, "orders")
	a.clock.Advance(8*time.Second - time.Millisecond)
	if err := h.Valid(); err != nil {
		t.Fatalf("Valid just before TTL − skew: %v", err)
	}
	select {
	case <-h.Lost():
		t.Fatal("lost before the deadline")
	default:
	}
	a.clock.Advance(time.Millisecond) // TTL − skew
	select {
	case <-h.Lost():
	default:
		t.Fatal("Lost not closed at the deadline")
	}
	if err := h.Err(); !errors.Is(err, ErrNotHeld) || !errors.Is(err, ErrDeadlinePassed) {
		t.Fatalf("Err at the deadline: %v, want not held, past the deadline", err)
	}
	_, rev := recordIn(t, s, "orders")
	if _, err := h.Commit(ctx, "k", "v"); !errors.Is(err, ErrFenced) {
		t.Fatalf("commit past the deadline: %v, want fenced", err)
	}
	if err := h.Renew(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("renew past the deadline: %v, want not held", err)
	}
	if _, rev2 := recordIn(t, s, "orders"); rev2 != rev {
		t.Error("a holder past its deadline wrote the lease record")
	}
}

// Every write of the holder moves its deadline: a commit renews as a renewal does.
func TestACommitMovesTheDeadline(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil)
	h := mustAcquire(t, a, "orders")
	a.clock.Advance(5 * time.Second)
	if _, err := h.Commit(ctx, "k", 1); err != nil {
		t.Fatal(err)
	}
	a.clock.Advance(5 * time.Second) // 10 s after the acquisition, 5 after the commit
	if err := h.Valid(); err != nil {
		t.Fatalf("5 s after a commit: %v", err)
	}
	a.clock.Advance(3 * time.Second)
	if err := h.Valid(); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("8 s after the commit: %v, want not held", err)
	}
}

// The holder that a later acquisition fenced past, without noticing it (its clock says it
// is inside its window), cannot commit: its entry stays unreadable.
func TestFencedHolderCommitIsUnreadable(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil)
	ha := mustAcquire(t, a, "orders")
	if _, err := ha.Commit(ctx, "k", "a-1"); err != nil {
		t.Fatal(err)
	}
	b := newMachine(t, s, "b", func(c *Config) { c.Wait = time.Minute })
	hb := mustAcquire(t, b, "orders")
	_, err := ha.Commit(ctx, "k", "a-2")
	wantCode(t, err, ErrFenced)
	if !strings.Contains(err.Error(), "raised to 2") {
		t.Errorf("message %q should name the higher fence", err)
	}
	log := OpenLog(s, "orders")
	head, err := log.Head(ctx, "k")
	if err != nil || string(head.Data) != `"a-1"` {
		t.Fatalf("head %+v, %v: want a's first commit", head, err)
	}
	e, err := hb.Commit(ctx, "k", "b-1")
	if err != nil || e.Seq != 2 || e.Fence != 2 || e.Prev != EntryKey("orders", 1, 1) {
		t.Fatalf("b's commit %+v, %v", e, err)
	}
	if _, ok, _ := log.Committed(ctx, 2, 1); ok {
		t.Error("a's fenced entry (seq 2, fence 1) reads as committed")
	}
	if _, ok, err := log.Committed(ctx, 2, 2); !ok || err != nil {
		t.Errorf("b's entry not committed: %v", err)
	}
	objs, _ := s.ListAll(ctx, LogPrefix)
	if len(objs) != 3 {
		t.Errorf("%d entries listed, want 3 (a-1, a's orphan, b-1)", len(objs))
	}
	var seen []string
	for e, err := range log.Walk(ctx, "k") {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, string(e.Data))
	}
	if strings.Join(seen, " ") != `"b-1" "a-1"` {
		t.Errorf("walk read %v, want b-1 then a-1", seen)
	}
}

func TestRenewAndReleaseByAFencedHolderLeaveTheObject(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil)
	ha := mustAcquire(t, a, "orders")
	b := newMachine(t, s, "b", func(c *Config) { c.Wait = time.Minute })
	mustAcquire(t, b, "orders")
	before, etag := recordIn(t, s, "orders")
	wantCode(t, ha.Renew(ctx), ErrNotHeld)
	wantCode(t, ha.Release(ctx), ErrNotHeld)
	after, etag2 := recordIn(t, s, "orders")
	if etag != etag2 || !reflect.DeepEqual(after, before) {
		t.Errorf("the lease object changed: %+v → %+v", before, after)
	}
	select {
	case <-ha.Lost():
	default:
		t.Error("Lost not closed after a failed renewal")
	}
}

func TestNodeIDLocalCannotTakeABucketLease(t *testing.T) {
	s := memStore()
	m := newMachine(t, s, LocalNode, nil)
	_, err := m.Acquire(ctx, "orders")
	wantCode(t, err, ErrNodeIDLocal)
	if !strings.Contains(err.Error(), EnvNodeID) || errcode.Of(err).Exit() != errcode.ExitUsage {
		t.Errorf("message %q should name %s; exit %d", err, EnvNodeID, errcode.Of(err).Exit())
	}
	if objs, _ := s.ListAll(ctx, ""); len(objs) != 0 {
		t.Errorf("%d objects written", len(objs))
	}
}

func TestEntryOfTheWrongKind(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil)
	h := mustAcquire(t, a, "orders")
	if _, err := h.Commit(ctx, "export", 1); err != nil {
		t.Fatal(err)
	}
	_, err := h.Commit(ctx, "backfill", 2)
	wantCode(t, err, ErrCursorKindMismatch)
	_, err = OpenLog(s, "orders").Head(ctx, "backfill")
	wantCode(t, err, ErrCursorKindMismatch)
	if p, _, _ := OpenLog(s, "orders").Pointer(ctx); p.Seq != 1 {
		t.Errorf("pointer at seq %d after a refused commit, want 1", p.Seq)
	}
}

// Lost answers are settled by the put-id, never resent.
func TestLostAnswersSettledByPutID(t *testing.T) {
	for _, which := range []string{"acquire", "renew", "commit-entry", "commit-record", "release"} {
		t.Run(which, func(t *testing.T) {
			b := &lossy{Bucket: memBucket()}
			s := store.New(b, nil)
			a := newMachine(t, s, "a", nil)
			arm := func(prefix string) {
				b.mu.Lock()
				b.match = func(k string) bool { return strings.HasPrefix(k, prefix) }
				b.mu.Unlock()
			}
			if which == "acquire" {
				arm(LeasePrefix)
			}
			h := mustAcquire(t, a, "orders")
			switch which {
			case "renew":
				arm(LeasePrefix)
				if err := h.Renew(ctx); err != nil {
					t.Fatal(err)
				}
			case "commit-entry", "commit-record":
				arm(map[string]string{"commit-entry": LogPrefix, "commit-record": LeasePrefix}[which])
				if _, err := h.Commit(ctx, "k", "v"); err != nil {
					t.Fatal(err)
				}
			case "release":
				arm(LeasePrefix)
				if err := h.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if b.lost != 1 {
				t.Fatalf("%d answers lost, want 1", b.lost)
			}
			// The holder's view matches the store: one more commit and a release succeed.
			if which != "release" {
				if _, err := h.Commit(ctx, "k", "after"); err != nil {
					t.Fatalf("commit after the lost answer: %v", err)
				}
				if err := h.Release(ctx); err != nil {
					t.Fatalf("release after the lost answer: %v", err)
				}
			}
			rec, _ := recordIn(t, s, "orders")
			if !rec.Released || rec.Fence != 1 {
				t.Errorf("lease record %+v", rec)
			}
		})
	}
}

// Keep renews every RenewEvery, and closes Lost once a renewal finds the lease taken over.
func TestKeepRenewsAndNoticesATakeover(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil)
	h := mustAcquire(t, a, "orders")
	b := newMachine(t, s, "b", func(c *Config) { c.Wait = time.Minute })
	renewals := 0
	a.clock.onSleep = func(d time.Duration) {
		if d != 3*time.Second {
			t.Errorf("Keep waited %s, want RenewEvery (3 s)", d)
		}
		if renewals++; renewals == 4 {
			// While a waits for its fourth renewal, b takes over (a's third renewal was
			// b's first sight; b's clock runs 12 s past it).
			if _, err := b.Acquire(ctx, "orders"); err != nil {
				t.Errorf("b: %v", err)
			}
		}
	}
	done := make(chan struct{})
	go func() { h.Keep(ctx); close(done) }()
	select {
	case <-h.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("Keep did not notice the takeover")
	}
	<-done
	wantCode(t, h.Err(), ErrNotHeld)
	if renewals != 4 {
		t.Errorf("%d renewals waited for, want 4", renewals)
	}
	if rec, _ := recordIn(t, s, "orders"); rec.Holder != "b" || rec.Fence != 2 {
		t.Errorf("lease object %+v, want b's", rec)
	}
}

// A lease record deleted by hand is a fresh lease: its fences start again at 1 (the docs say
// so: never delete it), but no earlier holder can write again, for its writes are replaces
// under a revision that is gone.
func TestDeletedLeaseRecordLetsNoEarlierHolderWrite(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil)
	h := mustAcquire(t, a, "orders")
	if _, err := h.Commit(ctx, "k", 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, LeaseKey("orders"), nil); err != nil {
		t.Fatal(err)
	}
	b := newMachine(t, s, "b", nil)
	hb := mustAcquire(t, b, "orders")
	if hb.Fence() != 1 || hb.Pointer().Seq != 0 {
		t.Fatalf("after the record was deleted: fence %d at seq %d, want a fresh lease", hb.Fence(), hb.Pointer().Seq)
	}
	if _, err := h.Commit(ctx, "k", 2); !errors.Is(err, ErrFenced) {
		t.Errorf("the earlier holder's commit: %v, want fenced", err)
	}
	if _, err := hb.Commit(ctx, "k", 3); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("the fresh lease's first commit onto an old entry's key: %v, want refused, never overwritten", err)
	}
}

// A lease that wharf kept before record format 2 (a lease object and a pointer object) is
// taken over with its log: the first acquisition takes the pointer's fence and head into
// the record (a pointer whose fence is above the lease object's, after the lease object was
// deleted, still raises the fence).
func TestFormatOneLeaseIsTakenOverWithItsLog(t *testing.T) {
	s := memStore()
	put := func(key, body string) {
		if _, err := s.Put(ctx, key, strings.NewReader(body), &store.PutOptions{Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
	}
	put(EntryKey("orders", 3, 5), `{"name":"orders","kind":"k","seq":3,"fence":5,"node":"old","data":"v3"}`)
	put(PointerKey("orders"), `{"name":"orders","kind":"k","fence":5,"seq":3,"head":"`+EntryKey("orders", 3, 5)+`"}`)
	put(LeaseKey("orders"), `{"name":"orders","holder":"old","fence":4,"ttl_ms":1000,"released":true}`)
	if e, err := OpenLog(s, "orders").Head(ctx, "k"); err != nil || string(e.Data) != `"v3"` {
		t.Fatalf("reading the format-1 log: %+v %v", e, err)
	}
	a := newMachine(t, s, "a", nil)
	h := mustAcquire(t, a, "orders")
	if h.Fence() != 6 {
		t.Fatalf("fence %d, want 6: above the pointer's 5", h.Fence())
	}
	if e, err := h.Head(ctx, "k"); err != nil || e.Seq != 3 {
		t.Fatalf("head %+v %v, want the format-1 log's seq 3", e, err)
	}
	e, err := h.Commit(ctx, "k", "v4")
	if err != nil || e.Seq != 4 || e.Prev != EntryKey("orders", 3, 5) {
		t.Fatalf("commit %+v %v", e, err)
	}
	var seen []string
	for e, err := range OpenLog(s, "orders").Walk(ctx, "k") {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, string(e.Data))
	}
	if strings.Join(seen, " ") != `"v4" "v3"` {
		t.Errorf("walk %v", seen)
	}
}

// Renew and release by name, as separate processes do them: only the holding node (and
// fence), and the object is left untouched otherwise.
func TestRenewAndReleaseByName(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil)
	h := mustAcquire(t, a, "orders")
	b := newMachine(t, s, "b", nil)
	_, etag := recordIn(t, s, "orders")
	_, err := b.Renew(ctx, "orders", 0)
	wantCode(t, err, ErrNotHeld)
	_, err = a.Release(ctx, "orders", h.Fence()+1)
	wantCode(t, err, ErrNotHeld)
	if _, etag2 := recordIn(t, s, "orders"); etag2 != etag {
		t.Fatal("a refused renew or release changed the lease object")
	}
	if _, err := a.Renew(ctx, "orders", h.Fence()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Release(ctx, "orders", 0); err != nil {
		t.Fatal(err)
	}
	if rec, _ := recordIn(t, s, "orders"); !rec.Released {
		t.Error("not released")
	}
	if _, err := a.Release(ctx, "orders", 0); err != nil {
		t.Errorf("releasing a released lease: %v", err)
	}
	_, err = a.Renew(ctx, "orders", 0)
	wantCode(t, err, ErrNotHeld)
}

// What a leased run costs: acquiring a released lease is 2 requests (read and replace the
// record, which carries the log's head, so reading the last entry costs none), a commit 2
// (create the entry, replace the record), a release 1: 5 in all. The very first acquisition
// of a name reads once more (a format-1 pointer), and the CheckEvery-th acquisition of a
// Leaser sends one more (the check that the store still enforces conditions).
func TestALeasedRunCostsFiveRequests(t *testing.T) {
	c := &counting{Bucket: memBucket()}
	s := store.New(c, nil)
	a := newMachine(t, s, "a", nil)
	run := func(i int) int64 {
		c.n.Store(0)
		h := mustAcquire(t, a, "orders")
		head, err := h.Head(ctx, "k")
		if err != nil || (i > 0) != (head != nil) {
			t.Fatalf("run %d: head %+v %v", i, head, err)
		}
		if _, err := h.Commit(ctx, "k", strings.Repeat("x", 1024)); err != nil {
			t.Fatal(err)
		}
		if err := h.Release(ctx); err != nil {
			t.Fatal(err)
		}
		return c.n.Load()
	}
	for i := range 2 * CheckEvery {
		want := int64(5)
		switch {
		case i == 0:
			want = 6 // the record and the format-1 pointer read, the record created
		case (i+1)%CheckEvery == 0:
			want = 6 // the check
		}
		if n := run(i); n != want {
			t.Errorf("run %d: %d requests, want %d", i+1, n, want)
		}
	}
}

// replacing fails the first n reads of each key as a store does whose object was replaced
// while it was read.
type replacing struct {
	driver.Bucket
	n int
}

func (r *replacing) Unwrap() driver.Bucket { return r.Bucket }

func (r *replacing) Get(ctx context.Context, key string, o *driver.GetOptions) (*driver.Object, error) {
	if r.n > 0 {
		r.n--
		return nil, &driver.Error{Op: "get", Key: key, Kind: driver.ErrPreconditionFailed, Err: errors.New("generation is not the live one")}
	}
	return r.Bucket.Get(ctx, key, o)
}

// A read that races a replacement (GCS answers it as a failed precondition) is read again.
func TestReadRacingAReplacementIsReadAgain(t *testing.T) {
	r := &replacing{Bucket: memBucket()}
	s := store.New(r, nil)
	a := newMachine(t, s, "a", nil)
	h := mustAcquire(t, a, "orders")
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r.n = 3
	if h := mustAcquire(t, a, "orders"); h.Fence() != 2 {
		t.Errorf("fence %d", h.Fence())
	}
	if r.n != 0 {
		t.Errorf("%d refusals left", r.n)
	}
}
