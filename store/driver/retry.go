package driver

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/sleep"
)

// RetryPolicy is wharf's one retry policy. The unit of retry is one request. Backends turn
// their SDK's own retries off; the portable store applies the policy to every call, and a
// backend applies it to each request it makes on its own (a multipart part, say).
//
// The zero value is not useful; start from DefaultRetryPolicy.
type RetryPolicy struct {
	// TransportAttempts bounds attempts after transport faults (reset, timeout, incomplete
	// body). Conditional puts are attempted once and return ErrOutcomeUnknown.
	TransportAttempts int
	// ThrottleAttempts bounds attempts after 429, 503, and 500 (except on conditional puts).
	ThrottleAttempts int
	// ThrottleBase and ThrottleMax bound the jittered wait: before retry n (n ≥ 1) the policy
	// waits a uniform draw below min(ThrottleBase·2^(n-1), ThrottleMax).
	ThrottleBase, ThrottleMax time.Duration
	// ConnectTimeout bounds a TCP connect.
	ConnectTimeout time.Duration
	// ResponseTimeouts bound the wait for a response after the request body is sent: attempt
	// i uses ResponseTimeouts[min(i, len-1)].
	ResponseTimeouts []time.Duration

	// Sleep waits d or until ctx ends; nil means a real timer. Tests inject their own.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a uniform draw in [0, 1); nil means math/rand/v2.
	Rand func() float64
}

// DefaultRetryPolicy returns the policy of DESIGN.md: 3 transport attempts, 5 throttling
// attempts waiting below a ceiling doubling from 100 ms to 5 s, a 5 s connect timeout and
// response timeouts of 2 s, 4 s, then 10 s.
func DefaultRetryPolicy() *RetryPolicy {
	return &RetryPolicy{
		TransportAttempts: 3,
		ThrottleAttempts:  5,
		ThrottleBase:      100 * time.Millisecond,
		ThrottleMax:       5 * time.Second,
		ConnectTimeout:    5 * time.Second,
		ResponseTimeouts:  []time.Duration{2 * time.Second, 4 * time.Second, 10 * time.Second},
	}
}

// Request describes one request to the policy.
type Request struct {
	Op          string
	Key         string
	Conditional bool // a conditional put (or a multipart commit carrying a condition)
	// Replayable is false when the request body cannot be sent again (a consumed stream):
	// then a transport fault is not retried.
	Replayable bool
}

// Do runs fn under the policy. fn receives the attempt's context, which carries the attempt's
// response timeout for the HTTP client (see NewHTTPClient). Do returns fn's error unchanged
// when it is definitive (Fault None; an *Error that answered a resend notes its Attempts), the context's error when ctx ends (before any attempt,
// if it already has), ErrOutcomeUnknown for a conditional put whose answer was lost, and
// ErrUnavailable naming the request when retries are spent.
func (p *RetryPolicy) Do(ctx context.Context, req Request, fn func(ctx context.Context) error) error {
	var transport, throttled int
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err // a cancelled call never reaches the backend
		}
		actx := withResponseTimeout(ctx, p.responseTimeout(attempt))
		err := fn(actx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fault := FaultOf(err)
		if fault == FaultNone && !IsContext(err) {
			return attempted(err, attempt+1)
		}
		if fault == FaultNone {
			// A context error from fn while ctx is alive is the attempt's own timeout.
			fault = FaultTransport
		}
		var wait time.Duration
		switch {
		case fault == FaultTransport && req.Conditional && !NeverSent(err):
			return p.final(req, err, ErrOutcomeUnknown, attempt+1)
		case fault == FaultTransport && req.Conditional:
			// The connection was refused: the request never left, so it is sent again like
			// any other (a conditional put's outcome is unknown only once it was sent).
			transport++
			if transport >= p.TransportAttempts {
				return p.final(req, err, ErrUnavailable, attempt+1)
			}
		case fault == FaultTransport:
			transport++
			if transport >= p.TransportAttempts || !req.Replayable {
				return p.final(req, err, ErrUnavailable, attempt+1)
			}
		case fault == FaultThrottled && req.Conditional && statusOf(err) == 500:
			// A 500 may have applied the write: its outcome is unknown.
			return p.final(req, err, ErrOutcomeUnknown, attempt+1)
		default:
			throttled++
			if throttled >= p.ThrottleAttempts || !req.Replayable {
				return p.final(req, err, ErrUnavailable, attempt+1)
			}
			wait = p.backoff(throttled)
		}
		if err := p.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// attempted notes on a definitive *Error that it answered the attempts-th send of the request
// (a failed condition after a throttled resend may follow an attempt that applied).
func attempted(err error, attempts int) error {
	var e *Error
	if attempts > 1 && errors.As(err, &e) && e.Attempts == 0 {
		e.Attempts = attempts
	}
	return err
}

func (p *RetryPolicy) final(req Request, err error, kind *errcode.Code, attempts int) error {
	e := &Error{Op: req.Op, Key: req.Key, Kind: kind, Err: err, Attempts: attempts}
	var inner *Error
	if errors.As(err, &inner) {
		e.Status, e.Reason, e.PutID = inner.Status, inner.Reason, inner.PutID
		e.Err = inner.Err
		if e.Err == nil {
			e.Err = errors.New(inner.Kind.Error())
		}
	}
	return e
}

// backoff returns the wait before throttling retry n (n ≥ 1).
func (p *RetryPolicy) backoff(n int) time.Duration {
	ceiling := p.ThrottleBase
	for i := 1; i < n && ceiling < p.ThrottleMax; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, p.ThrottleMax)
	r := rand.Float64
	if p.Rand != nil {
		r = p.Rand
	}
	return time.Duration(r() * float64(ceiling))
}

func (p *RetryPolicy) responseTimeout(attempt int) time.Duration {
	if len(p.ResponseTimeouts) == 0 {
		return 0
	}
	return p.ResponseTimeouts[min(attempt, len(p.ResponseTimeouts)-1)]
}

func (p *RetryPolicy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	return sleep.For(ctx, d)
}

func statusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// IsBodyFault reports errors that mean a response body ended early or the network failed.
func IsBodyFault(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errBodyStalled) || isNetError(err)
}

// NeverSent reports whether err is a failure to connect (a refused or unreachable dial):
// the request never left, so nothing of it can have been applied.
func NeverSent(err error) bool {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}
