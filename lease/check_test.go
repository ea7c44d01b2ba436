package lease

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/probe"
)

// stripping is a store that stops enforcing conditions when told to (a proxy starts
// stripping them, a gateway is reconfigured).
type stripping struct {
	driver.Bucket
	on *atomic.Bool
}

func (s stripping) Unwrap() driver.Bucket { return s.Bucket }

func (s stripping) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	if s.on.Load() && o != nil {
		c := *o
		c.IfMatch, c.IfNoneMatch = "", false
		o = &c
	}
	return s.Bucket.Put(ctx, key, body, o)
}

// A store proven cas, and remembered so, that stops enforcing conditions is found within
// CheckEvery acquisitions (counted across the processes that share the remembered verdict):
// the acquisition that checks fails ErrCoordinationUnproven, the verdict is forgotten, and the
// next Open probes again and refuses the store.
func TestCheckFindsAStoreThatStoppedEnforcingConditions(t *testing.T) {
	var on atomic.Bool
	s, err := store.Open(t.Context(), "mem://lease-check", &store.Config{Wrap: func(b driver.Bucket) driver.Bucket {
		return stripping{Bucket: b, on: &on}
	}})
	if err != nil {
		t.Fatal(err)
	}
	v := &probe.Verdicts{Path: filepath.Join(t.TempDir(), "probes.json")}
	open := func() (*Leaser, error) { return Open(t.Context(), s, testConfig("n1"), &Options{Verdicts: v}) }
	cycle := func(l *Leaser) error {
		h, err := l.Acquire(ctx, "orders")
		if err != nil {
			return err
		}
		return h.Release(ctx)
	}
	first, err := open()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := cycle(first); err != nil {
			t.Fatal(err)
		}
	}
	on.Store(true)
	refused := 0
	for i := range CheckEvery {
		l, err := open() // a process of its own, trusting the remembered verdict
		if err != nil {
			t.Fatalf("acquisition %d after the store stopped: open: %v", i+1, err)
		}
		if err := cycle(l); err != nil {
			if !errors.Is(err, ErrCoordinationUnproven) || !strings.Contains(err.Error(), "no longer enforces") {
				t.Fatalf("acquisition %d: %v, want coordination unproven", i+1, err)
			}
			refused = i + 1
			if err := cycle(l); !errors.Is(err, ErrCoordinationUnproven) {
				t.Errorf("the same Leaser's next acquisition: %v, want refused too", err)
			}
			break
		}
	}
	if refused == 0 {
		t.Fatalf("no acquisition in %d after the store stopped enforcing conditions was refused", CheckEvery)
	}
	t.Logf("refused at acquisition %d after the store stopped enforcing conditions (%d since the probe)", refused, refused+3)
	if _, ok := v.Lookup(s.Describe()); ok {
		t.Error("the remembered verdict survived")
	}
	if _, err := open(); !errors.Is(err, ErrCoordinationUnproven) {
		t.Errorf("the next Open: %v, want the probe to refuse the store", err)
	}
}

// The check costs one request, on the CheckEvery-th acquisition only, and an enforcing store
// refuses it: the acquisition goes on.
func TestCheckPassesOnAnEnforcingStore(t *testing.T) {
	c := &counting{Bucket: memBucket()}
	s := store.New(c, nil)
	a := newMachine(t, s, "a", nil)
	for i := range 3 * CheckEvery {
		c.n.Store(0)
		h := mustAcquire(t, a, "orders")
		n := c.n.Load()
		if err := h.Release(ctx); err != nil {
			t.Fatal(err)
		}
		want := int64(2)
		switch {
		case i == 0:
			want = 3 // the format-1 pointer is read once
		case (i+1)%CheckEvery == 0:
			want = 3
		}
		if n != want {
			t.Errorf("acquisition %d: %d requests, want %d", i+1, n, want)
		}
	}
}

// A TTL too large for any sum never wraps round: a record whose TTL is the largest there is
// (written by no wharf: the config bounds it to MaxTTL) is held, as far as any contender
// judges, for as long as it says.
func TestHugeTTLNeverOverflows(t *testing.T) {
	s := memStore()
	b, _ := json.Marshal(Record{Format: recordFormat, Name: "orders", Holder: "x", Fence: 1, TTLMillis: math.MaxInt64})
	if _, err := s.Put(ctx, LeaseKey("orders"), strings.NewReader(string(b)), &store.PutOptions{Size: int64(len(b))}); err != nil {
		t.Fatal(err)
	}
	m := newMachine(t, s, "b", func(c *Config) { c.Wait = 24 * time.Hour })
	_, err := m.Acquire(ctx, "orders")
	var he *HeldError
	if !errors.As(err, &he) || he.Until.Before(epoch.Add(100*365*24*time.Hour)) {
		t.Fatalf("a lease with the largest TTL: %v, want held for centuries", err)
	}
	if took := m.clock.Mono(); took < 24*time.Hour {
		t.Errorf("gave up after %s, want the whole wait", took)
	}
}

// `wharf lease renew` for the node of a running holder does not stop it: the holder adopts
// the renewal (same fence, same node, not released) and renews on it; a release by name does
// stop it.
func TestHolderAdoptsARenewalByItsNode(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil)
	h := mustAcquire(t, a, "orders")
	if _, err := h.Commit(ctx, "k", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Renew(ctx, "orders", h.Fence()); err != nil {
		t.Fatal(err)
	}
	if err := h.Renew(ctx); err != nil {
		t.Fatalf("the holder's renewal after one by name: %v, want adopted", err)
	}
	if _, err := a.Renew(ctx, "orders", 0); err != nil {
		t.Fatal(err)
	}
	if e, err := h.Commit(ctx, "k", 2); err != nil || e.Seq != 2 {
		t.Fatalf("the holder's commit after a renewal by name: %+v %v", e, err)
	}
	if _, err := a.Release(ctx, "orders", 0); err != nil {
		t.Fatal(err)
	}
	if err := h.Renew(ctx); !errors.Is(err, ErrNotHeld) || !strings.Contains(err.Error(), "released by someone else") {
		t.Fatalf("after a release by name: %v, want not held", err)
	}
}

// A renewal by name never shortens the TTL a holder counts on.
func TestRenewByNameNeverShortensTheTTL(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil)
	mustAcquire(t, a, "orders")
	short := newMachine(t, s, "a", func(c *Config) { c.TTL, c.Skew, c.RenewEvery = time.Second, 0, 500*time.Millisecond })
	rec, err := short.Renew(ctx, "orders", 0)
	if err != nil || rec.TTL() != 10*time.Second {
		t.Fatalf("renewed with a 1 s TTL: %+v %v, want the record's 10 s kept", rec, err)
	}
}

// Save keeps state in the record in one request, fenced; the next holder reads it with the
// record it takes over; a fenced holder's save fails.
func TestSaveKeepsStateInTheRecord(t *testing.T) {
	c := &counting{Bucket: memBucket()}
	s := store.New(c, nil)
	a := newMachine(t, s, "a", nil)
	h := mustAcquire(t, a, "split-1")
	c.n.Store(0)
	if err := h.Save(ctx, map[string]int{"record": 41}); err != nil || c.n.Load() != 1 {
		t.Fatalf("save: %v in %d requests, want 1", err, c.n.Load())
	}
	b := newMachine(t, s, "b", func(c *Config) { c.Wait = time.Minute })
	hb := mustAcquire(t, b, "split-1")
	if string(hb.State()) != `{"record":41}` {
		t.Fatalf("the next holder's state %s", hb.State())
	}
	if err := h.Save(ctx, map[string]int{"record": 99}); !errors.Is(err, ErrFenced) {
		t.Fatalf("the fenced holder's save: %v, want fenced", err)
	}
	if rec, _ := recordIn(t, s, "split-1"); string(rec.State) != `{"record":41}` || rec.Holder != "b" {
		t.Errorf("record %+v", rec)
	}
}

// A Leaser remembers what it saw of a held lease across acquisitions: one that tries again
// and again without waiting (a worker polling for work) takes the lease over once it has
// seen the same revision for TTL + skew since it first saw it, as one long wait would.
func TestRepeatedAcquisitionsRememberTheirWatch(t *testing.T) {
	s := memStore()
	a := newMachine(t, s, "a", nil)
	mustAcquire(t, a, "orders")
	b := newMachine(t, s, "b", nil) // Wait 0
	for i := 0; ; i++ {
		_, err := b.Acquire(ctx, "orders")
		if err == nil {
			break
		}
		if !errors.Is(err, ErrHeld) || i > 10 {
			t.Fatalf("try %d at %s: %v", i+1, b.clock.Mono(), err)
		}
		b.clock.Advance(3 * time.Second)
	}
	if took := b.clock.Mono(); took != 12*time.Second {
		t.Errorf("took over at %s of b's clock, want 12 s (TTL + skew after its first sight)", took)
	}
}
