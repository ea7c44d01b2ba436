package storetest

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/wharfdata/wharf/store/driver"
)

// ErrInjected is the cause of every failure Faulty injects.
var ErrInjected = errors.New("storetest: injected fault")

// Rule says which calls of a Faulty store fail, and how. A call matches when its op and key
// match; of the matching calls, the first Skip pass through, the next Times fail (every one
// after Skip when Times is 0), and the rest pass through.
type Rule struct {
	Op  string // "get", "head", "put", "delete", "list"; "" matches every op
	Key string // "" matches every key (a listing's key is its prefix)

	Skip  int
	Times int

	// Fault and Status describe the injected *driver.Error: FaultTransport (Status 0) for a
	// reset connection, FaultThrottled with 429, 500 or 503 for a throttling answer.
	Fault  driver.Fault
	Status int

	// AfterApply makes the call reach the inner store and then loses its answer: the write
	// happened but the caller sees the fault (ErrOutcomeUnknown for a conditional put).
	AfterApply bool

	// Body, on a get, lets the call succeed and breaks its body instead: Read fails with the
	// fault after BodyAfter bytes.
	Body      bool
	BodyAfter int64
}

// FaultyBucket wraps a store and injects faults by its rules. It counts every call. Build one
// with Faulty; it is safe for concurrent use.
type FaultyBucket struct {
	s driver.Bucket

	mu     sync.Mutex
	rules  []Rule
	seen   []int // matching calls so far, per rule
	calls  map[string]int
	faults map[string]int
}

// Faulty returns b wrapped so that calls matching rules fail with injected *driver.Error values
// (kind ErrUnavailable, cause ErrInjected, the rule's Fault and Status). Open a store over it
// (store.New, or store.Config.Wrap) to test the retry policy, or a job's handling of
// ErrOutcomeUnknown, end to end.
func Faulty(b driver.Bucket, rules ...Rule) *FaultyBucket {
	return &FaultyBucket{s: b, rules: rules, seen: make([]int, len(rules)),
		calls: map[string]int{}, faults: map[string]int{}}
}

var (
	_ driver.Bucket  = (*FaultyBucket)(nil)
	_ driver.Wrapper = (*FaultyBucket)(nil)
)

// Calls returns how many calls of op reached the wrapper ("" counts every op).
func (f *FaultyBucket) Calls(op string) int { return f.count(f.calls, op) }

// Faults returns how many calls of op had a fault injected ("" counts every op).
func (f *FaultyBucket) Faults(op string) int { return f.count(f.faults, op) }

func (f *FaultyBucket) count(m map[string]int, op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if op != "" {
		return m[op]
	}
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// match records a call and returns the rule that faults it, if any.
func (f *FaultyBucket) match(op, key string) (Rule, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
	for i, r := range f.rules {
		if (r.Op != "" && r.Op != op) || (r.Key != "" && r.Key != key) {
			continue
		}
		f.seen[i]++
		n := f.seen[i] - r.Skip
		if n >= 1 && (r.Times == 0 || n <= r.Times) {
			f.faults[op]++
			return r, true
		}
	}
	return Rule{}, false
}

func (r Rule) err(op, key string) error {
	return &driver.Error{Op: op, Key: key, Kind: driver.ErrUnavailable, Err: ErrInjected, Fault: r.Fault, Status: r.Status}
}

// Unwrap returns the bucket f wraps: capabilities f does not intercept (Copy, DeleteMany,
// MakeBucket) reach it directly.
func (f *FaultyBucket) Unwrap() driver.Bucket        { return f.s }
func (f *FaultyBucket) Close() error                 { return f.s.Close() }
func (f *FaultyBucket) Describe() driver.Description { return f.s.Describe() }

func (f *FaultyBucket) Get(ctx context.Context, key string, opts *driver.GetOptions) (*driver.Object, error) {
	r, hit := f.match("get", key)
	if hit && !r.AfterApply && !r.Body {
		return nil, r.err("get", key)
	}
	obj, err := f.s.Get(ctx, key, opts)
	switch {
	case err != nil || !hit:
		return obj, err
	case r.Body:
		obj.ReadCloser = &brokenBody{ReadCloser: obj.ReadCloser, left: r.BodyAfter, err: r.err("get", key)}
		return obj, nil
	default:
		obj.Close()
		return nil, r.err("get", key)
	}
}

func (f *FaultyBucket) Head(ctx context.Context, key string) (driver.ObjectInfo, error) {
	r, hit := f.match("head", key)
	if hit && !r.AfterApply {
		return driver.ObjectInfo{}, r.err("head", key)
	}
	info, err := f.s.Head(ctx, key)
	if hit && err == nil {
		return driver.ObjectInfo{}, r.err("head", key)
	}
	return info, err
}

// Put consumes the body before it injects a fault that is not AfterApply, as a request that
// broke mid-send would, so a retry must rewind it.
func (f *FaultyBucket) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	r, hit := f.match("put", key)
	if hit && !r.AfterApply {
		if body != nil {
			_, _ = io.Copy(io.Discard, body)
		}
		return driver.ObjectInfo{}, r.err("put", key)
	}
	info, err := f.s.Put(ctx, key, body, opts)
	if hit && err == nil {
		return driver.ObjectInfo{}, r.err("put", key)
	}
	return info, err
}

func (f *FaultyBucket) Delete(ctx context.Context, key string, opts *driver.DeleteOptions) error {
	r, hit := f.match("delete", key)
	if hit && !r.AfterApply {
		return r.err("delete", key)
	}
	err := f.s.Delete(ctx, key, opts)
	if hit && err == nil {
		return r.err("delete", key)
	}
	return err
}

func (f *FaultyBucket) List(ctx context.Context, opts *driver.ListOptions) (driver.Page, error) {
	r, hit := f.match("list", opts.Prefix)
	if hit {
		return driver.Page{}, r.err("list", opts.Prefix)
	}
	return f.s.List(ctx, opts)
}

// brokenBody fails with err once left bytes have been read.
type brokenBody struct {
	io.ReadCloser
	left int64
	err  error
}

func (b *brokenBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, b.err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
