package lease

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
)

var errDone = errors.New("done: not to be taken")

// AcquireIf shows the caller the record's state in the acquisition's one read, and writes
// nothing when the caller declines: a job learns that a split is done without taking it.
func TestAcquireIfDeclinesWithoutWriting(t *testing.T) {
	c := &counting{Bucket: memBucket()}
	s := store.New(c, nil)
	a := newMachine(t, s, "a", nil)
	var seen []string
	want := func(st json.RawMessage) error {
		seen = append(seen, string(st))
		if string(st) == `"done"` {
			return errDone
		}
		return nil
	}
	h, err := a.AcquireIf(ctx, "split-1", want)
	if err != nil || len(seen) != 1 || seen[0] != "" {
		t.Fatalf("a fresh lease: %v, the state seen %q", err, seen)
	}
	if err := h.ReleaseWith(ctx, "done"); err != nil {
		t.Fatal(err)
	}
	c.n.Store(0)
	if _, err := a.AcquireIf(ctx, "split-1", want); !errors.Is(err, errDone) || c.n.Load() != 1 {
		t.Fatalf("a lease released done: %v in %d requests, want the caller's refusal in one read", err, c.n.Load())
	}
	if rec, _ := recordIn(t, s, "split-1"); !rec.Released || string(rec.State) != `"done"` || rec.Fence != 1 {
		t.Fatalf("after a refusal the record is %+v, want it as ReleaseWith left it", rec)
	}
}

// ReleaseWith saves the state and releases in one write; the next holder finds the state.
func TestReleaseWithSavesAndReleasesInOneWrite(t *testing.T) {
	c := &counting{Bucket: memBucket()}
	s := store.New(c, nil)
	a := newMachine(t, s, "a", nil)
	h := mustAcquire(t, a, "split-1")
	c.n.Store(0)
	if err := h.ReleaseWith(ctx, map[string]int{"records": 7}); err != nil || c.n.Load() != 1 {
		t.Fatalf("ReleaseWith: %v in %d requests, want 1", err, c.n.Load())
	}
	select {
	case <-h.Lost():
	default:
		t.Fatal("Lost is open after ReleaseWith")
	}
	b := newMachine(t, s, "b", nil)
	hb := mustAcquire(t, b, "split-1") // released: taken at once
	if string(hb.State()) != `{"records":7}` || hb.Fence() != 2 {
		t.Fatalf("the next holder: state %s, fence %d", hb.State(), hb.Fence())
	}
	if err := h.ReleaseWith(ctx, 1); err != nil {
		t.Fatalf("releasing twice: %v, want nil", err)
	}
	hb2 := newMachine(t, s, "c", func(c *Config) { c.Wait = time.Minute })
	if _, err := hb2.Acquire(ctx, "split-1"); err != nil {
		t.Fatal(err)
	}
	if err := hb.ReleaseWith(ctx, "late"); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("ReleaseWith by a holder taken over: %v, want ErrNotHeld", err)
	}
	if rec, _ := recordIn(t, s, "split-1"); string(rec.State) != `{"records":7}` || rec.Holder != "c" {
		t.Fatalf("record %+v: the fenced holder's state landed", rec)
	}
}

// A HeldError says whether the record changed since this Leaser's previous look (its holder
// is alive) or not (it may have died): two processes given one node id tell each other
// apart from a predecessor that was killed.
func TestHeldErrorSaysWhetherTheHolderIsAlive(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "n1", nil)
	h := mustAcquire(t, a, "node-n1")
	b := newMachine(t, s, "n1", nil)
	held := func() *HeldError {
		t.Helper()
		_, err := b.Acquire(ctx, "node-n1")
		var he *HeldError
		if !errors.As(err, &he) || !he.Self {
			t.Fatalf("%v, want a HeldError naming this node", err)
		}
		return he
	}
	if he := held(); he.Live {
		t.Fatalf("the first look: %+v, want not known to be alive", he)
	}
	if he := held(); he.Live {
		t.Fatalf("unchanged since: %+v, want not known to be alive", he)
	}
	if err := h.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if he := held(); !he.Live {
		t.Fatalf("renewed since the last look: %+v, want alive", he)
	}
	if he := held(); he.Live {
		t.Fatalf("unchanged since the last look: %+v", he)
	}
}

// Keep does not renew a lease that a save renewed within RenewEvery: the holder's writes are
// its renewals.
func TestKeepCountsSavesAsRenewals(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil) // RenewEvery 3 s
	h := mustAcquire(t, a, "split-1")
	var waits []time.Duration
	saves := 0
	a.clock.onSleep = func(d time.Duration) {
		waits = append(waits, d)
		if saves < 2 {
			saves++
			// A save 2 s into the wait (the clock is put back: Sleep itself advances it by d).
			a.clock.Advance(2 * time.Second)
			if err := h.Save(ctx, saves); err != nil {
				t.Error(err)
			}
			a.clock.Advance(-2 * time.Second)
			return
		}
		if len(waits) > 4 {
			_ = h.Release(ctx)
		}
	}
	h.Keep(ctx)
	if len(waits) < 3 || waits[0] != 3*time.Second || waits[1] != 2*time.Second {
		t.Fatalf("Keep waited %v, want 3 s and then the 2 s left since the save", waits)
	}
}

// A Leaser of a fresh store (Options.Fresh) acquires a new name in two requests: it does not
// look for the pointer a wharf of record format 1 would have left.
func TestAFreshStoreHasNoPointersToLookFor(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		c := &counting{Bucket: memBucket()}
		s := store.New(c, nil)
		l, err := Open(ctx, s, testConfig("a"), &Options{Probe: casResult(s), Fresh: fresh, checkEvery: -1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Acquire(ctx, "split-1"); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int64{false: 3, true: 2}[fresh]; c.n.Load() != want {
			t.Errorf("fresh %v: a new name acquired in %d requests, want %d", fresh, c.n.Load(), want)
		}
	}
}
