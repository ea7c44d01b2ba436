package storetest

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/wharfdata/wharf/store"
)

// ErrInjected is the cause of every failure Faulty injects.
var ErrInjected = errors.New("storetest: injected fault")

// Rule says which calls of a Faulty store fail, and how. A call matches when its op and key
// match; of the matching calls, the first Skip pass through, the next Times fail (every one
// after Skip when Times is 0), and the rest pass through.
type Rule struct {
	Op  string // "get", "head", "put", "delete", "list", "copy"; "" matches every op
	Key string // "" matches every key (a listing's key is its prefix)

	Skip  int
	Times int

	// Fault and Status describe the injected *store.Error: FaultTransport (Status 0) for a
	// reset connection, FaultThrottled with 429, 500 or 503 for a throttling answer.
	Fault  store.Fault
	Status int

	// AfterApply makes the call reach the inner store and then loses its answer: the write
	// happened but the caller sees the fault (ErrOutcomeUnknown for a conditional put).
	AfterApply bool

	// Body, on a get, lets the call succeed and breaks its body instead: Read fails with the
	// fault after BodyAfter bytes.
	Body      bool
	BodyAfter int64
}

// FaultyStore wraps a store and injects faults by its rules. It counts every call. Build one
// with Faulty; it is safe for concurrent use.
type FaultyStore struct {
	s store.Store

	mu     sync.Mutex
	rules  []Rule
	seen   []int // matching calls so far, per rule
	calls  map[string]int
	faults map[string]int
}

// Faulty returns s wrapped so that calls matching rules fail with injected *store.Error values
// (kind ErrUnavailable, cause ErrInjected, the rule's Fault and Status). Wrap it with
// store.Retry to test the retry policy end to end.
func Faulty(s store.Store, rules ...Rule) *FaultyStore {
	return &FaultyStore{s: s, rules: rules, seen: make([]int, len(rules)),
		calls: map[string]int{}, faults: map[string]int{}}
}

var (
	_ store.Store     = (*FaultyStore)(nil)
	_ store.Copier    = (*FaultyStore)(nil)
	_ store.Unwrapper = (*FaultyStore)(nil)
)

// Calls returns how many calls of op reached the wrapper ("" counts every op).
func (f *FaultyStore) Calls(op string) int { return f.count(f.calls, op) }

// Faults returns how many calls of op had a fault injected ("" counts every op).
func (f *FaultyStore) Faults(op string) int { return f.count(f.faults, op) }

func (f *FaultyStore) count(m map[string]int, op string) int {
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
func (f *FaultyStore) match(op, key string) (Rule, bool) {
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
	return &store.Error{Op: op, Key: key, Kind: store.ErrUnavailable, Err: ErrInjected, Fault: r.Fault, Status: r.Status}
}

func (f *FaultyStore) Unwrap() store.Store { return f.s }
func (f *FaultyStore) Close() error        { return f.s.Close() }
func (f *FaultyStore) Describe() store.Description {
	return store.Describe(f.s)
}

func (f *FaultyStore) Get(ctx context.Context, key string, opts *store.GetOptions) (*store.Object, error) {
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

func (f *FaultyStore) Head(ctx context.Context, key string) (store.ObjectInfo, error) {
	r, hit := f.match("head", key)
	if hit && !r.AfterApply {
		return store.ObjectInfo{}, r.err("head", key)
	}
	info, err := f.s.Head(ctx, key)
	if hit && err == nil {
		return store.ObjectInfo{}, r.err("head", key)
	}
	return info, err
}

// Put consumes the body before it injects a fault that is not AfterApply, as a request that
// broke mid-send would, so a retry must rewind it.
func (f *FaultyStore) Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error) {
	r, hit := f.match("put", key)
	if hit && !r.AfterApply {
		if body != nil {
			_, _ = io.Copy(io.Discard, body)
		}
		return store.ObjectInfo{}, r.err("put", key)
	}
	info, err := f.s.Put(ctx, key, body, opts)
	if hit && err == nil {
		return store.ObjectInfo{}, r.err("put", key)
	}
	return info, err
}

func (f *FaultyStore) Delete(ctx context.Context, key string, opts *store.DeleteOptions) error {
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

func (f *FaultyStore) List(ctx context.Context, opts *store.ListOptions) (store.Page, error) {
	prefix := ""
	if opts != nil {
		prefix = opts.Prefix
	}
	r, hit := f.match("list", prefix)
	if hit {
		return store.Page{}, r.err("list", prefix)
	}
	return f.s.List(ctx, opts)
}

// Copy copies through the inner store (server-side where it is a Copier).
func (f *FaultyStore) Copy(ctx context.Context, src, dst string, opts *store.PutOptions) (store.ObjectInfo, error) {
	r, hit := f.match("copy", dst)
	if hit && !r.AfterApply {
		return store.ObjectInfo{}, r.err("copy", dst)
	}
	info, err := store.Copy(ctx, f.s, src, dst, opts)
	if hit && err == nil {
		return store.ObjectInfo{}, r.err("copy", dst)
	}
	return info, err
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
