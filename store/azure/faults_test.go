package azure

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/store"
)

// fastPolicy is the default policy without its waits.
func fastPolicy() *store.RetryPolicy {
	p := store.DefaultRetryPolicy()
	p.ResponseTimeouts = []time.Duration{20 * time.Second}
	p.Sleep = func(ctx context.Context, d time.Duration) error { return ctx.Err() }
	return p
}

// TestSDKRetriesOff: a service answering 503 ServerBusy to every listing sees exactly the
// policy's 5 attempts — the SDK adds none of its own — and the error is ErrUnavailable
// naming the request, with the status and code.
func TestSDKRetriesOff(t *testing.T) {
	t.Parallel()
	s, _, proxy := openProxied(t, fastPolicy())
	proxy.Inject(faultproxy.Rule{Method: "GET", Query: "comp=list", Fault: faultproxy.Status, Status: 503, Code: "ServerBusy"})
	_, err := s.List(t.Context(), &store.ListOptions{Prefix: "p/"})
	var e *store.Error
	if !errors.Is(err, store.ErrUnavailable) || !errors.As(err, &e) || e.Attempts != 5 || e.Status != 503 || e.Reason != "ServerBusy" || e.Op != "list" {
		t.Fatalf("list against a busy service: %v (%#v), want ErrUnavailable after 5 attempts, HTTP 503 ServerBusy", err, e)
	}
	if n := countQuery(proxy, "GET", "comp=list"); n != 5 {
		t.Errorf("%d list requests reached the service, want 5", n)
	}
}

// TestBlockRetriedAlone: a block answered 503 once, and a block whose connection is reset
// once, are each sent again alone; the put succeeds with one commit.
func TestBlockRetriedAlone(t *testing.T) {
	t.Parallel()
	s, _, proxy := openProxied(t, fastPolicy())
	proxy.Inject(faultproxy.Rule{Method: "PUT", Query: "blockid=", Skip: 1, Times: 1, Fault: faultproxy.Status, Status: 503, Code: "ServerBusy"})
	proxy.Inject(faultproxy.Rule{Method: "PUT", Query: "blockid=", Skip: 2, Times: 1, Fault: faultproxy.Reset})
	data := randomData(4<<20, 8)
	if _, err := s.Put(t.Context(), "k", io.MultiReader(bytes.NewReader(data)), &store.PutOptions{Size: -1}); err != nil {
		t.Fatalf("put with one busy and one reset block: %v", err)
	}
	if n := countQuery(proxy, "PUT", "blockid="); n != 6 {
		t.Errorf("%d Put Block requests for 4 blocks with 2 faults, want 6", n)
	}
	if n := len(commits(proxy)); n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
	if got := readAll(t, s, "k"); got != string(data) {
		t.Errorf("read back %d bytes, want %d", len(got), len(data))
	}
}

// TestConditionalCommitAnswerLost: a conditional commit whose answer is lost is never sent
// again: one Head of its put-id settles it, so the put succeeds when it landed; one lost
// before it applied (a reset) is ErrOutcomeUnknown with its put-id, which does not resolve.
func TestConditionalCommitAnswerLost(t *testing.T) {
	t.Parallel()
	s, _, proxy := openProxied(t, fastPolicy())
	proxy.Inject(faultproxy.Rule{Method: "PUT", Query: "comp=blocklist", Times: 1, Fault: faultproxy.Lost})
	data := randomData(3<<20+1, 9)
	if _, err := s.Put(t.Context(), "k", bytes.NewReader(data), &store.PutOptions{Size: int64(len(data)), IfNoneMatch: true}); err != nil {
		t.Fatalf("lost commit answer of a commit that landed: %v, want it settled by the put-id", err)
	}
	if n := len(commits(proxy)); n != 1 {
		t.Errorf("%d commits sent, want exactly 1", n)
	}
	if got := readAll(t, s, "k"); got != string(data) {
		t.Errorf("read back %d bytes, want %d", len(got), len(data))
	}
	proxy.Inject(faultproxy.Rule{Method: "PUT", Query: "comp=blocklist", Times: 1, Fault: faultproxy.Reset})
	_, err := s.Put(t.Context(), "k2", bytes.NewReader(data), &store.PutOptions{Size: int64(len(data)), IfNoneMatch: true})
	var e *store.Error
	if !errors.Is(err, store.ErrOutcomeUnknown) || !errors.As(err, &e) || e.PutID == "" {
		t.Fatalf("reset commit: %v, want ErrOutcomeUnknown with a put-id", err)
	}
	if n := len(commits(proxy)); n != 2 {
		t.Errorf("%d commits sent in all, want 2: a conditional commit is never resent", n)
	}
	if _, landed, err := s.ResolvePut(t.Context(), "k2", e.PutID); err != nil || landed {
		t.Errorf("ResolvePut of a commit that never applied: landed %v, %v", landed, err)
	}
}

// TestConditionalPut500: a 500 to a conditional Put Blob may have applied it: outcome unknown
// after one attempt. An unconditional put is retried.
func TestConditionalPut500(t *testing.T) {
	t.Parallel()
	s, _, proxy := openProxied(t, fastPolicy())
	in := proxy.Inject(faultproxy.Rule{Method: "PUT", Path: "/cond", Fault: faultproxy.Status, Status: 500, Code: "InternalError"})
	_, err := s.Put(t.Context(), "cond", strings.NewReader("x"), &store.PutOptions{Size: 1, IfNoneMatch: true})
	if !errors.Is(err, store.ErrOutcomeUnknown) || in.Fired() != 1 {
		t.Errorf("conditional put answered 500: %v after %d attempts, want ErrOutcomeUnknown after 1", err, in.Fired())
	}
	proxy.Inject(faultproxy.Rule{Method: "PUT", Path: "/plain", Times: 2, Fault: faultproxy.Status, Status: 500, Code: "InternalError"})
	if _, err := s.Put(t.Context(), "plain", strings.NewReader("x"), &store.PutOptions{Size: 1}); err != nil {
		t.Errorf("unconditional put answered 500 twice: %v, want it retried to success", err)
	}
}

// TestResponseTimeout: the store's HTTP client sits under the SDK, so each attempt's response
// timeout applies: a stalled GET gives up after the policy's timeout, three times.
func TestResponseTimeout(t *testing.T) {
	t.Parallel()
	p := fastPolicy()
	p.ResponseTimeouts = []time.Duration{200 * time.Millisecond}
	s, _, proxy := openProxied(t, p)
	if _, err := s.Put(t.Context(), "k", strings.NewReader("x"), &store.PutOptions{Size: 1}); err != nil {
		t.Fatal(err)
	}
	proxy.Inject(faultproxy.Rule{Method: "GET", Path: "/k", Fault: faultproxy.Stall, Delay: 5 * time.Second})
	start := time.Now()
	_, err := s.Get(t.Context(), "k", nil)
	var e *store.Error
	if !errors.Is(err, store.ErrUnavailable) || !errors.As(err, &e) || e.Attempts != 3 {
		t.Fatalf("stalled get: %v, want ErrUnavailable after 3 attempts", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("stalled get took %v, want about 3 × 200 ms", d)
	}
}
