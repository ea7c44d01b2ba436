package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
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
	if Code(err) != "WHARF_UNAVAILABLE" {
		t.Errorf("code %q", Code(err))
	}
}

// flaky is a one-object store whose calls fail as scripted.
type flaky struct {
	data    []byte
	etag    string
	fails   []error // consumed one per call
	calls   int
	breakAt int // Get bodies break after this many bytes on the first read
	gets    []GetOptions
	putBody [][]byte
}

func (f *flaky) next() error {
	f.calls++
	if len(f.fails) == 0 {
		return nil
	}
	err := f.fails[0]
	f.fails = f.fails[1:]
	return err
}

func (f *flaky) Get(ctx context.Context, key string, o *GetOptions) (*Object, error) {
	if err := f.next(); err != nil {
		return nil, err
	}
	var opts GetOptions
	if o != nil {
		opts = *o
	}
	f.gets = append(f.gets, opts)
	if opts.IfMatch != "" && opts.IfMatch != f.etag {
		return nil, &Error{Op: "get", Key: key, Kind: ErrPreconditionFailed}
	}
	body := f.data[opts.Offset:]
	var r io.Reader = bytes.NewReader(body)
	if f.breakAt > 0 && f.breakAt < len(body) {
		r = io.MultiReader(bytes.NewReader(body[:f.breakAt]), errReader{transportFault()})
		f.breakAt = 0
	}
	return &Object{Info: ObjectInfo{Key: key, Size: int64(len(f.data)), ETag: f.etag}, ReadCloser: io.NopCloser(r)}, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func (f *flaky) Head(ctx context.Context, key string) (ObjectInfo, error) {
	return ObjectInfo{Key: key, Size: int64(len(f.data)), ETag: f.etag}, f.next()
}

func (f *flaky) Put(ctx context.Context, key string, body io.Reader, o *PutOptions) (ObjectInfo, error) {
	b, _ := io.ReadAll(body)
	f.putBody = append(f.putBody, b)
	return ObjectInfo{Key: key, Size: int64(len(b))}, f.next()
}

func (f *flaky) Delete(ctx context.Context, key string, o *DeleteOptions) error { return f.next() }
func (f *flaky) List(ctx context.Context, o *ListOptions) (Page, error)         { return Page{}, f.next() }
func (f *flaky) Close() error                                                   { return nil }

func TestRetryWrapperResumesBrokenGet(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 1000)
	f := &flaky{data: data, etag: "e1", breakAt: 4096}
	p, _ := policyForTest(0)
	s := Retry(f, p)
	obj, err := s.Get(context.Background(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("got %d bytes, want %d identical", len(got), len(data))
	}
	if len(f.gets) != 2 || f.gets[1].Offset != 4096 || f.gets[1].IfMatch != "e1" {
		t.Fatalf("gets = %+v, want a resume at 4096 pinned to e1", f.gets)
	}
}

func TestRetryWrapperResumeRefusesChangedObject(t *testing.T) {
	f := &flaky{data: bytes.Repeat([]byte("x"), 10000), etag: "e1", breakAt: 100}
	p, _ := policyForTest(0)
	obj, err := Retry(f, p).Get(context.Background(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	f.etag = "e2" // overwritten while being read
	_, err = io.ReadAll(obj)
	if !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("err = %v, want precondition failed when the object changed mid-read", err)
	}
}

func TestRetryWrapperPutReplaysSeekableBody(t *testing.T) {
	f := &flaky{fails: []error{throttled(503), transportFault()}}
	p, _ := policyForTest(0)
	_, err := Retry(f, p).Put(context.Background(), "k", bytes.NewReader([]byte("hello")), &PutOptions{Size: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.putBody) != 3 {
		t.Fatalf("%d attempts, want 3", len(f.putBody))
	}
	for i, b := range f.putBody {
		if string(b) != "hello" {
			t.Errorf("attempt %d sent %q, want the whole body again", i+1, b)
		}
	}
}

func TestRetryWrapperStreamPutIsNotResent(t *testing.T) {
	f := &flaky{fails: []error{throttled(503)}}
	p, _ := policyForTest(0)
	_, err := Retry(f, p).Put(context.Background(), "k", io.MultiReader(strings.NewReader("hello")), nil)
	if !errors.Is(err, ErrUnavailable) || len(f.putBody) != 1 {
		t.Fatalf("err=%v attempts=%d, want unavailable after one attempt (a consumed stream cannot be resent)", err, len(f.putBody))
	}
}
