package store

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"time"
)

// RetryPolicy is wharf's one retry policy. The unit of retry is one request. Backends turn
// their SDK's own retries off; the Retry wrapper applies the policy to every Store call, and a
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
// when it is definitive (Fault None), the context's error when ctx ends, ErrOutcomeUnknown for a
// conditional put whose answer was lost, and ErrUnavailable naming the request when retries are
// spent.
func (p *RetryPolicy) Do(ctx context.Context, req Request, fn func(ctx context.Context) error) error {
	var transport, throttled int
	for attempt := 0; ; attempt++ {
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
			return err
		}
		if fault == FaultNone {
			// A context error from fn while ctx is alive is the attempt's own timeout.
			fault = FaultTransport
		}
		var wait time.Duration
		switch {
		case fault == FaultTransport && req.Conditional:
			return p.final(req, err, ErrOutcomeUnknown, attempt+1)
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

func (p *RetryPolicy) final(req Request, err error, kind *Kind, attempts int) error {
	e := &Error{Op: req.Op, Key: req.Key, Kind: kind, Err: err, Attempts: attempts}
	var inner *Error
	if errors.As(err, &inner) {
		e.Status, e.Code = inner.Status, inner.Code
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
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func statusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// Retry wraps s so that every call follows p. A Get whose body breaks mid-stream resumes with
// a ranged Get pinned to the ETag it started with; a Put is retried only when its body is an
// io.Seeker (so it can be sent again) or empty.
func Retry(s Store, p *RetryPolicy) Store {
	return &retrying{s: s, p: p}
}

type retrying struct {
	s Store
	p *RetryPolicy
}

func (r *retrying) Unwrap() Store { return r.s }

func (r *retrying) Close() error { return r.s.Close() }

func (r *retrying) Head(ctx context.Context, key string) (info ObjectInfo, err error) {
	err = r.p.Do(ctx, Request{Op: "head", Key: key, Replayable: true}, func(ctx context.Context) error {
		info, err = r.s.Head(ctx, key)
		return err
	})
	return info, err
}

func (r *retrying) List(ctx context.Context, opts *ListOptions) (page Page, err error) {
	err = r.p.Do(ctx, Request{Op: "list", Key: opts.Prefix, Replayable: true}, func(ctx context.Context) error {
		page, err = r.s.List(ctx, opts)
		return err
	})
	return page, err
}

func (r *retrying) Delete(ctx context.Context, key string, opts *DeleteOptions) error {
	return r.p.Do(ctx, Request{Op: "delete", Key: key, Replayable: true}, func(ctx context.Context) error {
		return r.s.Delete(ctx, key, opts)
	})
}

func (r *retrying) Put(ctx context.Context, key string, body io.Reader, opts *PutOptions) (info ObjectInfo, err error) {
	seeker, replayable := body.(io.Seeker)
	if body == nil {
		replayable = true
	}
	var start int64
	if seeker != nil {
		if start, err = seeker.Seek(0, io.SeekCurrent); err != nil {
			replayable = false
		}
	}
	first := true
	req := Request{Op: "put", Key: key, Conditional: opts.Conditional(), Replayable: replayable}
	err = r.p.Do(ctx, req, func(ctx context.Context) error {
		if !first && seeker != nil {
			if _, err := seeker.Seek(start, io.SeekStart); err != nil {
				return err
			}
		}
		first = false
		info, err = r.s.Put(ctx, key, body, opts)
		return err
	})
	return info, err
}

func (r *retrying) Get(ctx context.Context, key string, opts *GetOptions) (obj *Object, err error) {
	obj, err = r.get(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	var o GetOptions
	if opts != nil {
		o = *opts
	}
	return &Object{Info: obj.Info, ReadCloser: &resumingBody{
		ctx: ctx, r: r, key: key, opts: o, etag: obj.Info.ETag, body: obj.ReadCloser,
	}}, nil
}

func (r *retrying) get(ctx context.Context, key string, opts *GetOptions) (obj *Object, err error) {
	err = r.p.Do(ctx, Request{Op: "get", Key: key, Replayable: true}, func(ctx context.Context) error {
		obj, err = r.s.Get(ctx, key, opts)
		return err
	})
	return obj, err
}

func (r *retrying) Copy(ctx context.Context, src, dst string, opts *PutOptions) (info ObjectInfo, err error) {
	c, ok := r.s.(Copier)
	if !ok {
		return copyStream(ctx, r, src, dst, opts)
	}
	err = r.p.Do(ctx, Request{Op: "copy", Key: dst, Conditional: opts.Conditional(), Replayable: true}, func(ctx context.Context) error {
		info, err = c.Copy(ctx, src, dst, opts)
		return err
	})
	return info, err
}

func (r *retrying) MakeBucket(ctx context.Context) error {
	m, ok := r.s.(BucketMaker)
	if !ok {
		return &Error{Op: "make-bucket", Kind: ErrUnsupported}
	}
	return r.p.Do(ctx, Request{Op: "make-bucket", Replayable: true}, m.MakeBucket)
}

func (r *retrying) Describe() Description { return Describe(r.s) }

// DeleteMany passes a batch through to a BatchDeleter (which applies the policy to each of
// its requests itself), else deletes one key at a time, each under the policy.
func (r *retrying) DeleteMany(ctx context.Context, keys []string) error {
	if b, ok := r.s.(BatchDeleter); ok {
		return b.DeleteMany(ctx, keys)
	}
	for _, k := range keys {
		if err := r.Delete(ctx, k, nil); err != nil {
			return err
		}
	}
	return nil
}

// resumingBody reads an object body and, when the stream breaks with a transport fault,
// reopens it at the next byte with a Get pinned to the original ETag, within the policy's
// transport attempts.
type resumingBody struct {
	ctx    context.Context
	r      *retrying
	key    string
	opts   GetOptions
	etag   string
	body   io.ReadCloser
	read   int64
	faults int
}

func (b *resumingBody) Read(p []byte) (int, error) {
	for {
		n, err := b.body.Read(p)
		b.read += int64(n)
		if err == nil || err == io.EOF || n > 0 {
			if err != nil && err != io.EOF {
				// Report the bytes now; the fault returns on the next Read.
				return n, nil
			}
			return n, err
		}
		if b.ctx.Err() != nil {
			return 0, b.ctx.Err()
		}
		if FaultOf(err) != FaultTransport && !isBodyFault(err) && !IsContext(err) {
			return 0, err
		}
		b.faults++
		if b.faults >= b.r.p.TransportAttempts || b.etag == "" {
			return 0, &Error{Op: "get", Key: b.key, Kind: ErrUnavailable, Err: err, Attempts: b.faults}
		}
		if err := b.reopen(); err != nil {
			return 0, err
		}
	}
}

func (b *resumingBody) reopen() error {
	b.body.Close()
	o := GetOptions{IfMatch: b.etag, Offset: b.opts.Offset + b.read}
	if b.opts.Length > 0 {
		o.Length = b.opts.Length - b.read
	}
	obj, err := b.r.get(b.ctx, b.key, &o)
	if err != nil {
		return err
	}
	if obj.Info.ETag != "" && obj.Info.ETag != b.etag {
		obj.Close()
		return &Error{Op: "get", Key: b.key, Kind: ErrPreconditionFailed,
			Err: errors.New("object changed while it was being read")}
	}
	b.body = obj.ReadCloser
	return nil
}

func (b *resumingBody) Close() error { return b.body.Close() }

// isBodyFault reports errors that mean a response body ended early.
func isBodyFault(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errBodyStalled) || isNetError(err)
}
