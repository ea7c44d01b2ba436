package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store/driver"
)

func policyForTest(draw float64) (*RetryPolicy, *[]time.Duration) {
	var slept []time.Duration
	p := DefaultRetryPolicy()
	p.Sleep = func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return ctx.Err() }
	p.Rand = func() float64 { return draw }
	return p, &slept
}

func throttled(status int) error {
	return &Error{Op: "x", Kind: ErrUnavailable, Status: status, Fault: driver.FaultThrottled}
}

func transportFault() error {
	return &Error{Op: "x", Kind: ErrUnavailable, Err: io.ErrUnexpectedEOF, Fault: driver.FaultTransport}
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
func (f *flaky) Describe() Description                                          { return Description{Scheme: "flaky"} }

func TestRetryWrapperResumesBrokenGet(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 1000)
	f := &flaky{data: data, etag: "e1", breakAt: 4096}
	p, _ := policyForTest(0)
	s := New(f, p)
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
	obj, err := New(f, p).Get(context.Background(), "k", nil)
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
	_, err := New(f, p).Put(context.Background(), "k", bytes.NewReader([]byte("hello")), &PutOptions{Size: 5})
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
	_, err := New(f, p).Put(context.Background(), "k", io.MultiReader(strings.NewReader("hello")), nil)
	if !errors.Is(err, ErrUnavailable) || len(f.putBody) != 1 {
		t.Fatalf("err=%v attempts=%d, want unavailable after one attempt (a consumed stream cannot be resent)", err, len(f.putBody))
	}
}
