package driver

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wharfdata/wharf/errcode"
)

// policyForTest returns the default policy with a recording sleep and a fixed draw.
func policyForTest(draw float64) (*RetryPolicy, *[]time.Duration) {
	var slept []time.Duration
	p := DefaultRetryPolicy()
	p.Sleep = func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return ctx.Err() }
	p.Rand = func() float64 { return draw }
	return p, &slept
}

func throttled(status int) error {
	return &Error{Op: "x", Kind: ErrUnavailable, Status: status, Fault: FaultThrottled}
}

func transportFault() error {
	return &Error{Op: "x", Kind: ErrUnavailable, Fault: FaultTransport, Err: io.ErrUnexpectedEOF}
}

func TestRetryPolicyAttempts(t *testing.T) {
	cases := []struct {
		name     string
		req      Request
		fail     error
		attempts int
		kind     error
		sleeps   []time.Duration // with draw 0.5
	}{
		{"transport, get", Request{Op: "get", Replayable: true}, transportFault(), 3, ErrUnavailable, []time.Duration{0, 0}},
		{"transport, conditional put", Request{Op: "put", Conditional: true, Replayable: true}, transportFault(), 1, ErrOutcomeUnknown, nil},
		{"transport, unreplayable put", Request{Op: "put", Replayable: false}, transportFault(), 1, ErrUnavailable, nil},
		{"503", Request{Op: "head", Replayable: true}, throttled(503), 5, ErrUnavailable,
			[]time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{"429 conditional put is retried", Request{Op: "put", Conditional: true, Replayable: true}, throttled(429), 5, ErrUnavailable,
			[]time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{"500 unconditional", Request{Op: "put", Replayable: true}, throttled(500), 5, ErrUnavailable,
			[]time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{"500 conditional put", Request{Op: "put", Conditional: true, Replayable: true}, throttled(500), 1, ErrOutcomeUnknown, nil},
		{"definitive", Request{Op: "get", Replayable: true}, &Error{Op: "get", Kind: ErrNotExist}, 1, ErrNotExist, nil},
		{"precondition", Request{Op: "put", Conditional: true, Replayable: true}, &Error{Op: "put", Kind: ErrPreconditionFailed}, 1, ErrPreconditionFailed, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, slept := policyForTest(0.5)
			calls := 0
			err := p.Do(context.Background(), c.req, func(context.Context) error { calls++; return c.fail })
			if calls != c.attempts {
				t.Errorf("attempts = %d, want %d", calls, c.attempts)
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("err = %v, want kind %v", err, c.kind)
			}
			if len(*slept) != len(c.sleeps) {
				t.Fatalf("slept %v, want %v", *slept, c.sleeps)
			}
			for i := range c.sleeps {
				if (*slept)[i] != c.sleeps[i] {
					t.Errorf("sleep %d = %v, want %v", i, (*slept)[i], c.sleeps[i])
				}
			}
			if FaultOf(err) != FaultNone {
				t.Errorf("error leaving the policy has fault %v, want none", FaultOf(err))
			}
		})
	}
}

func TestRetryPolicyRecovers(t *testing.T) {
	p, _ := policyForTest(0)
	calls := 0
	err := p.Do(context.Background(), Request{Op: "get", Replayable: true}, func(context.Context) error {
		calls++
		if calls < 3 {
			return transportFault()
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err=%v calls=%d, want success on the third attempt", err, calls)
	}
}

func TestBackoffCeilingDoublesTo5s(t *testing.T) {
	p, _ := policyForTest(0.999999)
	p.ThrottleAttempts = 20
	want := []time.Duration{100, 200, 400, 800, 1600, 3200, 5000, 5000}
	for i, w := range want {
		got := p.backoff(i + 1)
		ceil := w * time.Millisecond
		if got >= ceil || got < ceil-ceil/1000 {
			t.Errorf("backoff(%d) = %v, want just below %v", i+1, got, ceil)
		}
	}
}

func TestResponseTimeoutsPerAttempt(t *testing.T) {
	p, _ := policyForTest(0)
	var seen []time.Duration
	_ = p.Do(context.Background(), Request{Op: "get", Replayable: true}, func(ctx context.Context) error {
		seen = append(seen, ResponseTimeout(ctx))
		return transportFault()
	})
	want := []time.Duration{2 * time.Second, 4 * time.Second, 10 * time.Second}
	if len(seen) != len(want) {
		t.Fatalf("attempts saw %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("attempt %d response timeout %v, want %v", i+1, seen[i], want[i])
		}
	}
}

func TestRetryStopsWhenCancelled(t *testing.T) {
	p, _ := policyForTest(0)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := p.Do(ctx, Request{Op: "get", Replayable: true}, func(context.Context) error {
		calls++
		cancel()
		return transportFault()
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("err=%v calls=%d, want context.Canceled after one call", err, calls)
	}
	var e *Error
	if errors.As(err, &e) {
		t.Errorf("a cancelled call must return the context's error unwrapped, got *Error %v", e)
	}
}

func TestUnavailableNamesTheRequest(t *testing.T) {
	p, _ := policyForTest(0)
	err := p.Do(context.Background(), Request{Op: "head", Key: "logs/a.json", Replayable: true},
		func(context.Context) error { return throttled(503) })
	msg := err.Error()
	for _, want := range []string{"head", "logs/a.json", "5 attempts", "503"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if errcode.NameOf(err) != "WHARF_UNAVAILABLE" {
		t.Errorf("code %q", errcode.NameOf(err))
	}
}

// TestRefusedConnectionIsNotOutcomeUnknown: a conditional put whose connection was refused
// never left, so it is retried like any request and ends unavailable, never outcome-unknown;
// one that was sent and lost its answer is outcome-unknown at once.
func TestRefusedConnectionIsNotOutcomeUnknown(t *testing.T) {
	p, _ := policyForTest(0)
	refused := &Error{Op: "put", Kind: ErrUnavailable, Fault: FaultTransport,
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	calls := 0
	err := p.Do(context.Background(), Request{Op: "put", Key: "k", Conditional: true, Replayable: true},
		func(context.Context) error { calls++; return refused })
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrOutcomeUnknown) || calls != p.TransportAttempts {
		t.Errorf("refused conditional put: %v after %d calls; want unavailable after %d", err, calls, p.TransportAttempts)
	}
	calls = 0
	err = p.Do(context.Background(), Request{Op: "put", Key: "k", Conditional: true, Replayable: true},
		func(context.Context) error { calls++; return transportFault() })
	if !errors.Is(err, ErrOutcomeUnknown) || calls != 1 {
		t.Errorf("lost answer of a conditional put: %v after %d calls; want outcome unknown after 1", err, calls)
	}
}

// A failed condition that answers a resend (after a throttled attempt, which may have
// applied) says so in Attempts; one that answers the only send does not, so that a caller
// needs no read-back to trust it.
func TestDefinitiveAnswerToAResendNotesAttempts(t *testing.T) {
	p, _ := policyForTest(0)
	req := Request{Op: "put", Conditional: true, Replayable: true}
	answers := []error{throttled(503), &Error{Op: "put", Kind: ErrPreconditionFailed}}
	err := p.Do(context.Background(), req, func(context.Context) error { e := answers[0]; answers = answers[1:]; return e })
	e := &Error{}
	if !errors.As(err, &e) || !errors.Is(err, ErrPreconditionFailed) || e.Attempts != 2 {
		t.Fatalf("after a 503 and a 412: %v (attempts %d), want the 412 noting 2 attempts", err, e.Attempts)
	}
	err = p.Do(context.Background(), req, func(context.Context) error { return &Error{Op: "put", Kind: ErrPreconditionFailed} })
	if !errors.As(err, &e) || e.Attempts != 0 {
		t.Fatalf("a 412 to the only send: %v (attempts %d), want none noted", err, e.Attempts)
	}
}
