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
		{"acquire", LeasePrefix}, {"raise", PointerPrefix}, {"renew", LeasePrefix},
		{"commit-entry", LogPrefix}, {"commit-pointer", PointerPrefix}, {"release", LeasePrefix},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			px := newProxied(t, nil)
			l := realNode(t, px.viaProxy, "a", 0)
			lose := func() *faultproxy.Injection {
				return px.proxy.Inject(faultproxy.Rule{Method: "PUT", Path: c.path, Fault: faultproxy.Lost, Times: 1})
			}
			var in *faultproxy.Injection
			if c.name == "acquire" || c.name == "raise" {
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
			case "commit-entry", "commit-pointer":
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
			if n := px.proxy.Count("PUT", c.path); n != map[string]int{"acquire": 1, "raise": 1, "renew": 2,
				"commit-entry": 1, "commit-pointer": 2, "release": 2}[c.name] {
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
			rec, _ := readRecord(t, px.open, "orders")
			if !rec.Released || rec.Fence != 1 || rec.Holder != "a" {
				t.Errorf("lease object %+v", rec)
			}
		})
	}
}

// A storm of 503s (four in a row on each kind of request, one short of the policy's five
// attempts) is retried by the store's policy: acquire, commit and release succeed.
func TestMinIO503Storm(t *testing.T) {
	px := newProxied(t, nil)
	var storm []*faultproxy.Injection
	for _, r := range []faultproxy.Rule{{Method: "GET", Path: LeasePrefix}, {Method: "PUT", Path: LeasePrefix},
		{Method: "GET", Path: PointerPrefix}, {Method: "PUT", Path: PointerPrefix}, {Method: "PUT", Path: LogPrefix}} {
		r.Fault, r.Status, r.Times = faultproxy.Status, 503, 4
		storm = append(storm, px.proxy.Inject(r))
	}
	l := realNode(t, px.viaProxy, "a", 0)
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

// A commit whose pointer advance stalls past the TTL, while another node takes the lease
// over, fails ErrFenced when it finally reaches the store, and stays unreadable.
func TestMinIOStalledCommitPastTTLIsFenced(t *testing.T) {
	slow := store.DefaultRetryPolicy()
	slow.ResponseTimeouts = []time.Duration{20 * time.Second}
	px := newProxied(t, slow)
	a := realNode(t, px.viaProxy, "a", 0)
	ha, err := a.Acquire(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	stall := px.proxy.Inject(faultproxy.Rule{Method: "PUT", Path: PointerPrefix, Fault: faultproxy.Stall, Delay: 3 * time.Second, Times: 1})
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
