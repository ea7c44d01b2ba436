package lease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// proxied is one bucket of MinIO reached two ways: through a fault proxy (the node under
// test) and directly (another node).
type proxied struct {
	proxy          *faultproxy.Proxy
	viaProxy, open *store.Store
}

func newProxied(t *testing.T, retry *store.RetryPolicy) proxied {
	t.Helper()
	srv := testenv.MinIO(t)
	p, psrv := testenv.FaultProxy(t, srv)
	url := "s3://" + uniqueBucket("fault") + "/jobs"
	direct := openFresh(t, url, srv.StoreConfig(t))
	cfg := psrv.StoreConfig(t)
	cfg.Retry = retry
	via, err := store.Open(context.Background(), url, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { via.Close() })
	return proxied{proxy: p, viaProxy: via, open: direct}
}

// realNode opens a Leaser on s with the system clock: TTL 1 s, skew 200 ms, renewal 250 ms.
func realNode(t *testing.T, s *store.Store, node string, wait time.Duration) *Leaser {
	t.Helper()
	c := DefaultConfig()
	c.Node, c.TTL, c.Skew, c.RenewEvery, c.Wait = node, time.Second, 200*time.Millisecond, 250*time.Millisecond, wait
	l, err := Open(context.Background(), s, c, &Options{Probe: casResult(s)})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A lost answer to each conditional write of a lease is settled by its put-id: the write
// landed, the holder goes on, and nothing was sent twice.
func TestMinIOLostAnswersSettledByPutID(t *testing.T) {
	cases := []struct{ name, path string }{
		{"acquire", LeasePrefix}, {"renew", LeasePrefix},
		{"commit-entry", LogPrefix}, {"commit-record", LeasePrefix}, {"release", LeasePrefix},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			px := newProxied(t, nil)
			l := realNode(t, px.viaProxy, "a", 0)
			lose := func() *faultproxy.Injection {
				return px.proxy.Inject(faultproxy.Rule{Method: "PUT", Path: c.path, Fault: faultproxy.Lost, Times: 1})
			}
			var in *faultproxy.Injection
			if c.name == "acquire" {
				in = lose()
			}
			h, err := l.Acquire(ctx, "orders")
			if err != nil {
				t.Fatal(err)
			}
			switch c.name {
			case "renew":
				in = lose()
				err = h.Renew(ctx)
			case "commit-entry", "commit-record":
				in = lose()
				_, err = h.Commit(ctx, "k", "v1")
			case "release":
				in = lose()
				err = h.Release(ctx)
			}
			if err != nil {
				t.Fatalf("%s with its answer lost: %v", c.name, err)
			}
			if in.Fired() != 1 {
				t.Fatalf("the fault fired %d times", in.Fired())
			}
			if n := px.proxy.Count("PUT", c.path); n != map[string]int{"acquire": 1, "renew": 2,
				"commit-entry": 1, "commit-record": 2, "release": 2}[c.name] {
				t.Errorf("%d PUTs under %s: a conditional write was sent again", n, c.path)
			}
			if c.name != "release" {
				if _, err := h.Commit(ctx, "k", "v2"); err != nil {
					t.Fatalf("commit after: %v", err)
				}
				if err := h.Release(ctx); err != nil {
					t.Fatalf("release after: %v", err)
				}
			}
			rec, _ := recordIn(t, px.open, "orders")
			if !rec.Released || rec.Fence != 1 || rec.Holder != "a" {
				t.Errorf("lease object %+v", rec)
			}
		})
	}
}

// A storm of 503s (four in a row on each kind of request, one short of the policy's five
// attempts) is retried by the store's policy: acquire, commit and release succeed (under a
// TTL that outlasts the storm's back-off).
func TestMinIO503Storm(t *testing.T) {
	px := newProxied(t, nil)
	var storm []*faultproxy.Injection
	for _, r := range []faultproxy.Rule{{Method: "GET", Path: LeasePrefix}, {Method: "PUT", Path: LeasePrefix},
		{Method: "PUT", Path: LogPrefix}} {
		r.Fault, r.Status, r.Times = faultproxy.Status, 503, 4
		storm = append(storm, px.proxy.Inject(r))
	}
	c := DefaultConfig()
	c.Node, c.TTL, c.Skew = "a", 30*time.Second, time.Second
	l, err := Open(context.Background(), px.viaProxy, c, &Options{Probe: casResult(px.viaProxy)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := l.Acquire(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Commit(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for i, in := range storm {
		if in.Fired() != 4 {
			t.Errorf("rule %d: %d 503s answered, want 4", i, in.Fired())
		}
	}
	if e, err := OpenLog(px.open, "orders").Head(ctx, "k"); err != nil || e.Seq != 1 || e.Fence != 1 {
		t.Errorf("head %+v, %v", e, err)
	}
}

// A commit whose record write stalls past the holder's deadline, while another node takes
// the lease over, fails ErrFenced at the deadline (its request is cancelled there: it never
// reaches the store), and its entry stays unreadable.
func TestMinIOStalledCommitPastTTLIsFenced(t *testing.T) {
	slow := store.DefaultRetryPolicy()
	slow.ResponseTimeouts = []time.Duration{20 * time.Second}
	px := newProxied(t, slow)
	a := realNode(t, px.viaProxy, "a", 0)
	ha, err := a.Acquire(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	stall := px.proxy.Inject(faultproxy.Rule{Method: "PUT", Path: LeasePrefix, Fault: faultproxy.Stall, Delay: 3 * time.Second, Times: 1})
	done := make(chan error, 1)
	go func() { _, err := ha.Commit(ctx, "k", "stalled"); done <- err }()
	b := realNode(t, px.open, "b", 2*time.Second)
	hb, err := b.Acquire(ctx, "orders")
	if err != nil {
		t.Fatalf("b: %v", err)
	}
	err = <-done
	if !errors.Is(err, ErrFenced) || stall.Fired() != 1 {
		t.Fatalf("stalled commit: %v (stall fired %d), want fenced", err, stall.Fired())
	}
	if _, err := hb.Commit(ctx, "k", "b"); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for e, err := range OpenLog(px.open, "orders").Walk(ctx, "k") {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, string(e.Data))
	}
	if len(seen) != 1 || seen[0] != `"b"` {
		t.Errorf("the log reads %v, want only b's commit", seen)
	}
}

// A holder cut off from the store (every request for its lease record hangs) loses its lease
// by its own deadline, TTL − skew after the send of its last successful renewal, whatever the
// renewal in flight does, and so before a contender can take the lease over (TTL + skew after
// it first saw that renewal: 2 × skew later at the earliest).
func TestMinIOHungRenewalLosesTheLeaseByItsDeadline(t *testing.T) {
	slow := store.DefaultRetryPolicy()
	slow.ResponseTimeouts = []time.Duration{time.Minute} // the store gives up long after any deadline
	px := newProxied(t, slow)
	c := DefaultConfig()
	c.Node, c.TTL, c.Skew, c.RenewEvery = "a", 4*time.Second, time.Second, time.Second
	l, err := Open(ctx, px.viaProxy, c, &Options{Probe: casResult(px.viaProxy)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := l.Acquire(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	kctx, stop := context.WithCancel(ctx)
	defer stop()
	go h.Keep(kctx)
	time.Sleep(1500 * time.Millisecond) // a renewal or two land
	hang := px.proxy.Inject(faultproxy.Rule{Path: LeasePrefix, Fault: faultproxy.Stall, Delay: time.Minute})
	for hang.Fired() == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	deadline := h.Deadline() // no renewal lands after the first one that hangs
	took := make(chan time.Time, 1)
	go func() {
		b := realNode(t, px.open, "b", time.Minute)
		if _, err := b.Acquire(ctx, "orders"); err != nil {
			t.Errorf("b: %v", err)
		}
		took <- time.Now()
	}()
	select {
	case <-h.Lost():
	case <-time.After(3 * c.TTL):
		t.Fatal("the holder cut off from the store never lost its lease")
	}
	lost := time.Now()
	if err := h.Err(); !errors.Is(err, ErrDeadlinePassed) {
		t.Fatalf("lost with %v, want past its deadline", err)
	}
	t.Logf("lost %s after its deadline (a takeover is possible %s after it)", lost.Sub(deadline).Round(time.Millisecond), 2*c.Skew)
	if !lost.Before(deadline.Add(2 * c.Skew)) {
		t.Errorf("lost %s after its deadline: a contender could have taken the lease over already", lost.Sub(deadline))
	}
	if tb := <-took; !tb.After(lost) {
		t.Errorf("b took the lease over %s before the holder lost it", lost.Sub(tb))
	}
}
