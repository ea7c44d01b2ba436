package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/probe"
)

// The history check: clients race to acquire, save state in, commit to and release one lease;
// every operation's invocation and response are recorded, and porcupine checks that the
// history is linearizable against the model of a lease below: no two acquisitions get one
// fence, fences rise one at a time, a commit or a save lands only under the current fence, an
// acquisition finds the state the last save that landed left (a backfill's split resumes from
// it), and a read of the log returns the last commit that landed (never one a fenced holder
// wrote). Releases save state too, now and then (ReleaseWith: a backfill's split, done).

type opKind int

const (
	opAcquire opKind = iota
	opCommit
	opRelease
	opRead
	opSave
)

type hInput struct {
	kind   opKind
	client int
	fence  int64
	value  string // committed, saved, or saved by a release ("" for a plain release)
}

type hOutput struct {
	ok    bool // acquired, committed, saved, released
	fence int64
	seq   int64
	value string // the log's head read, or the state an acquisition found
	// expired: a commit, save or release refused because the holder's deadline had passed
	// (its own timer, whoever holds the lease now): it changed nothing, and may come at any
	// time; unknown: unless it was cut in flight (ErrMayHaveLanded), when it may have landed.
	expired, unknown bool
}

// hState is the model's state: the fence last acquired, who holds it (-1: released), the
// log's head, and the state saved in the record.
type hState struct {
	fence  int64
	holder int
	seq    int64
	value  string
	state  string
}

// leaseModel is nondeterministic in one place: a write cut at its holder's deadline with the
// request in flight (ErrMayHaveLanded) changed nothing or landed, and both are legal; every
// other answer says exactly what happened.
var leaseModel = porcupine.NondeterministicModel{
	Init: func() []any { return []any{hState{holder: -1}} },
	Step: func(st, in, out any) []any {
		s, i, o := st.(hState), in.(hInput), out.(hOutput)
		if o.expired && i.kind == opAcquire {
			// The acquisition's write landed, too late for its holder to use: Acquire failed
			// past the deadline it set. The fence was raised all the same.
			s.fence, s.holder = s.fence+1, i.client
			return []any{s}
		}
		if o.expired {
			next := []any{s} // refused past the deadline, or cut and never applied
			if o.unknown {
				if l, ok := landed(s, i); ok {
					next = append(next, l)
				}
			}
			return next
		}
		ok, next := leaseStep(s, i, o)
		if !ok {
			return nil
		}
		return []any{next}
	},
	Equal: func(a, b any) bool { return a.(hState) == b.(hState) },
	DescribeOperation: func(in, out any) string {
		i, o := in.(hInput), out.(hOutput)
		return fmt.Sprintf("c%d %v f%d %q → %+v", i.client, i.kind, i.fence, i.value, o)
	},
}

// landed is the state a write of i's makes when it lands: only under the current fence, by
// its holder (the write is conditional on the revision that holder wrote last).
func landed(s hState, i hInput) (hState, bool) {
	if i.fence != s.fence || s.holder != i.client {
		return s, false
	}
	switch i.kind {
	case opCommit:
		s.seq, s.value = s.seq+1, i.value
	case opSave:
		s.state = i.value
	case opRelease:
		s.holder = -1
		if i.value != "" {
			s.state = i.value
		}
	default:
		return s, false
	}
	return s, true
}

// leaseStep is the model's step for an answer that says what happened.
func leaseStep(s hState, i hInput, o hOutput) (bool, hState) {
	switch i.kind {
	case opAcquire:
		if o.ok { // a takeover is always possible: expiry is not modelled, fences are
			return o.fence == s.fence+1 && o.value == s.state, hState{fence: o.fence, holder: i.client, seq: s.seq, value: s.value, state: s.state}
		}
		return s.holder != -1, s
	case opCommit:
		if o.ok {
			ok := i.fence == s.fence && s.holder == i.client && o.seq == s.seq+1
			return ok, hState{fence: s.fence, holder: s.holder, seq: o.seq, value: i.value, state: s.state}
		}
		return i.fence < s.fence, s
	case opSave:
		if o.ok {
			next := s
			next.state = i.value
			return i.fence == s.fence && s.holder == i.client, next
		}
		return i.fence < s.fence, s
	case opRelease:
		mine := s.holder == i.client && s.fence == i.fence
		if o.ok {
			next := s
			next.holder = -1
			if i.value != "" {
				next.state = i.value
			}
			return mine, next
		}
		return !mine, s
	}
	return o.seq == s.seq && o.value == s.value, s
}

// historyOptions size a run.
type historyOptions struct {
	clients, rounds int
	ttl             time.Duration
	// broken: the store is expected to misbehave, so an error ends the client's run
	// without failing the test; the checker judges what was recorded.
	broken bool
}

// historySize is the run's size: 6 clients × 40 rounds, or WHARF_LEASE_HISTORY_ROUNDS rounds
// (bench/lease.sh runs the full 200).
func historySize() historyOptions {
	o := historyOptions{clients: 6, rounds: 40, ttl: 300 * time.Millisecond}
	if n, err := strconv.Atoi(os.Getenv("WHARF_LEASE_HISTORY_ROUNDS")); err == nil && n > 0 {
		o.rounds = n
	}
	return o
}

// slowClock runs at a tenth of the real rate: a holder on it thinks it is inside its window
// long after others judged it expired, so only the fence stops its commits.
type slowClock struct{ Clock }

func (c slowClock) Mono() time.Duration { return c.Clock.Mono() / 10 }

func (c slowClock) AfterFunc(d time.Duration, f func()) func() bool {
	return c.Clock.AfterFunc(10*d, f)
}

type recorder struct {
	mu    sync.Mutex
	start time.Time
	ops   []porcupine.Operation
	// wall stamps operations with the wall clock (nanoseconds since start), which processes
	// on one machine share; otherwise with this process's monotonic clock.
	wall bool
	// lie records a write cut in flight as one that changed nothing, as the lease said
	// before ErrMayHaveLanded: the broken variant the checker must catch.
	lie bool
}

func (r *recorder) now() int64 {
	if r.wall {
		return time.Now().Round(0).Sub(r.start.Round(0)).Nanoseconds()
	}
	return time.Since(r.start).Nanoseconds()
}

func (r *recorder) do(client int, in hInput, fn func() (hOutput, error)) (hOutput, error) {
	call := r.now()
	out, err := fn()
	ret := r.now()
	if out.unknown && !r.lie {
		// A write cut in flight may land after its caller heard it was cut (a store applies
		// a request its client gave up on): its effect may come at any time after its call.
		ret = math.MaxInt64
	}
	if r.lie {
		out.unknown = false
	}
	if err == nil {
		r.mu.Lock()
		r.ops = append(r.ops, porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret})
		r.mu.Unlock()
	}
	return out, err
}

// opener opens a client's Leaser with cfg and opts: over a bucket (with its probe result)
// or over any cas.Store (OpenCAS), so that one history check covers every implementation.
type opener func(cfg Config, opts *Options) (*Leaser, error)

func bucketOpener(s *store.Store, res *probe.Result) opener {
	return func(cfg Config, opts *Options) (*Leaser, error) {
		opts.Probe = res
		return Open(context.Background(), s, cfg, opts)
	}
}

func casOpener(kv cas.Store) opener {
	return func(cfg Config, opts *Options) (*Leaser, error) { return OpenCAS(kv, cfg, opts) }
}

// runHistory races o.clients clients on lease "race" in s and returns the history. Each
// round a client tries to acquire (waiting long enough to take over an abandoned lease one
// round in three), then commits, sometimes after sleeping past its TTL, and releases, or
// now and then abandons the lease; every client then reads the log's head. Client 0's
// clock runs slow. Unexpected errors fail t.
func runHistory(t *testing.T, open opener, o historyOptions) []porcupine.Operation {
	t.Helper()
	return runHistoryWith(t, open, o, &recorder{start: time.Now()})
}

// runHistoryWith is runHistory recording with rec.
func runHistoryWith(t *testing.T, open opener, o historyOptions, rec *recorder) []porcupine.Operation {
	t.Helper()
	var wg sync.WaitGroup
	for c := range o.clients {
		wg.Go(func() { historyClient(t, open, o, c, rec) })
	}
	wg.Wait()
	return rec.ops
}

func historyClient(t *testing.T, open opener, o historyOptions, c int, rec *recorder) {
	ctx := context.Background()
	errorf := t.Errorf
	if o.broken {
		errorf = func(string, ...any) {} // errors are the symptom; the checker judges the history
	}
	cfg := DefaultConfig()
	cfg.Node, cfg.TTL, cfg.Skew, cfg.RenewEvery = fmt.Sprintf("node-%d", c), o.ttl, o.ttl/6, o.ttl/3
	var clk Clock = SystemClock()
	if c == 0 {
		clk = slowClock{clk}
	}
	opts := Options{Clock: clk}
	if o.broken {
		// The check that the store still enforces conditions would stop these clients within
		// CheckEvery acquisitions (TestCheckFindsAStoreThatStoppedEnforcingConditions): here
		// the history checker itself is on trial.
		opts.checkEvery = -1
	}
	quick, err := open(cfg, &opts)
	if err != nil {
		t.Errorf("client %d: %v", c, err)
		return
	}
	cfg.Wait = o.ttl + cfg.Skew + o.ttl/2
	patient, err := open(cfg, &opts)
	if err != nil {
		t.Errorf("client %d: %v", c, err)
		return
	}
	rnd := rand.New(rand.NewPCG(uint64(c), 7))
	for r := range o.rounds {
		l := quick
		if c != 0 && rnd.IntN(3) == 0 { // client 0's slow clock would wait ten times as long
			l = patient
		}
		var h *Lease
		_, err := rec.do(c, hInput{kind: opAcquire, client: c}, func() (hOutput, error) {
			var err error
			if h, err = l.Acquire(ctx, "race"); errors.Is(err, ErrHeld) {
				return hOutput{}, nil
			} else if errors.Is(err, ErrDeadlinePassed) {
				return hOutput{expired: true}, nil // a write slower than TTL − skew
			} else if err != nil {
				return hOutput{}, err
			}
			var st string
			if raw := h.State(); raw != nil {
				if err := json.Unmarshal(raw, &st); err != nil {
					return hOutput{}, err
				}
			}
			return hOutput{ok: true, fence: h.Fence(), value: st}, nil
		})
		switch {
		case err != nil:
			errorf("client %d round %d: acquire: %v", c, r, err)
			return
		case h == nil:
			time.Sleep(time.Duration(rnd.IntN(3)) * time.Millisecond)
			continue
		}
		if !historyHold(errorf, ctx, h, c, r, rnd, rec) {
			return
		}
	}
	historyRead(errorf, ctx, quick.Log("race"), c, rec)
}

// historyHold commits and releases (or abandons) h; false after an unexpected error.
func historyHold(errorf func(string, ...any), ctx context.Context, h *Lease, c, r int, rnd *rand.Rand, rec *recorder) bool {
	if rnd.IntN(30) == 0 {
		return true // abandoned, as by a crash: others take it over after TTL + skew
	}
	if pauses := map[bool]int{true: 2, false: 6}[c == 0]; rnd.IntN(pauses) == 0 {
		// A pause: another node may take over meanwhile. A holder's own deadline timer loses
		// the lease first (its commit is "past the deadline"), except client 0's, whose slow
		// clock keeps it inside its window: only the fence stops its commit.
		time.Sleep(2 * (h.l.cfg.TTL + h.l.cfg.Skew))
	}
	fence, value := h.Fence(), fmt.Sprintf("c%d-r%d", c, r)
	if rnd.IntN(2) == 0 && !historySave(errorf, ctx, h, c, r, "s-"+value, rec) {
		return false
	}
	_, err := rec.do(c, hInput{kind: opCommit, client: c, fence: fence, value: value}, func() (hOutput, error) {
		e, err := h.Commit(ctx, "race", value)
		if errors.Is(err, ErrDeadlinePassed) {
			return hOutput{expired: true, unknown: errors.Is(err, ErrMayHaveLanded)}, nil
		}
		if errors.Is(err, ErrFenced) {
			return hOutput{}, nil
		}
		if err != nil {
			return hOutput{}, err
		}
		return hOutput{ok: true, seq: e.Seq}, nil
	})
	if err != nil {
		errorf("client %d round %d: commit: %v", c, r, err)
		return false
	}
	saved := "" // a plain release, or one that saves state in the same write
	if rnd.IntN(2) == 0 {
		saved = "rw-" + value
	}
	_, err = rec.do(c, hInput{kind: opRelease, client: c, fence: fence, value: saved}, func() (hOutput, error) {
		var err error
		if saved != "" {
			err = h.ReleaseWith(ctx, saved)
		} else {
			err = h.Release(ctx)
		}
		if errors.Is(err, ErrDeadlinePassed) {
			return hOutput{expired: true, unknown: errors.Is(err, ErrMayHaveLanded)}, nil
		}
		if errors.Is(err, ErrNotHeld) {
			return hOutput{}, nil
		}
		return hOutput{ok: err == nil}, err
	})
	if err != nil {
		errorf("client %d round %d: release: %v", c, r, err)
		return false
	}
	return true
}

// historySave saves state in h's record; false after an unexpected error.
func historySave(errorf func(string, ...any), ctx context.Context, h *Lease, c, r int, state string, rec *recorder) bool {
	_, err := rec.do(c, hInput{kind: opSave, client: c, fence: h.Fence(), value: state}, func() (hOutput, error) {
		err := h.Save(ctx, state)
		switch {
		case errors.Is(err, ErrDeadlinePassed):
			return hOutput{expired: true, unknown: errors.Is(err, ErrMayHaveLanded)}, nil
		case errors.Is(err, ErrFenced):
			return hOutput{}, nil
		}
		return hOutput{ok: err == nil}, err
	})
	if err != nil {
		errorf("client %d round %d: save: %v", c, r, err)
		return false
	}
	return true
}

func historyRead(errorf func(string, ...any), ctx context.Context, g *Log, c int, rec *recorder) {
	_, err := rec.do(c, hInput{kind: opRead, client: c}, func() (hOutput, error) {
		e, err := g.Head(ctx, "race")
		if err != nil || e == nil {
			return hOutput{}, err
		}
		v, _ := strconv.Unquote(string(e.Data))
		return hOutput{seq: e.Seq, value: v}, nil
	})
	if err != nil {
		errorf("client %d: read: %v", c, err)
	}
}

// checkHistory returns porcupine's verdict and a summary of the history.
func checkHistory(t *testing.T, ops []porcupine.Operation) (porcupine.CheckResult, string) {
	t.Helper()
	var acquired, held, committed, saved, fenced, released, notHeld, expired, cut int
	for _, op := range ops {
		i, o := op.Input.(hInput), op.Output.(hOutput)
		if o.unknown {
			cut++
		}
		switch {
		case o.expired:
			expired++
		case i.kind == opAcquire && o.ok:
			acquired++
		case i.kind == opAcquire:
			held++
		case i.kind == opCommit && o.ok:
			committed++
		case i.kind == opSave && o.ok:
			saved++
		case i.kind == opCommit, i.kind == opSave:
			fenced++
		case i.kind == opRelease && o.ok:
			released++
		case i.kind == opRelease:
			notHeld++
		}
	}
	res := porcupine.CheckOperationsTimeout(leaseModel.ToModel(), ops, 2*time.Minute)
	return res, fmt.Sprintf("%d ops: %d acquired, %d held, %d committed, %d saved, %d fenced, %d released, %d not held, %d past the deadline (%d of them cut in flight)",
		len(ops), acquired, held, committed, saved, fenced, released, notHeld, expired, cut)
}

// verifyHistory runs the race on s and requires a linearizable history in which fences were
// both acquired and fenced past.
func verifyHistory(t *testing.T, s *store.Store, pr *probe.Result) {
	t.Helper()
	verifyOps(t, s.Describe().Scheme+", in one process", func(o historyOptions) []porcupine.Operation { return runHistory(t, bucketOpener(s, pr), o) })
}

// verifyProcesses is verifyHistory with each client in a process of its own, on the store
// of kind at url (which the probe proved cas).
func verifyProcesses(t *testing.T, kind, url string) {
	t.Helper()
	verifyOps(t, kind+", one process per client", func(o historyOptions) []porcupine.Operation { return runProcesses(t, kind, url, o) })
}

func verifyOps(t *testing.T, where string, run func(historyOptions) []porcupine.Operation) {
	t.Helper()
	o := historySize()
	start := time.Now()
	ops := run(o)
	if t.Failed() {
		t.FailNow()
	}
	res, summary := checkHistory(t, ops)
	t.Logf("%d clients × %d rounds on %s in %s: %s", o.clients, o.rounds, where, time.Since(start).Round(time.Millisecond), summary)
	if res != porcupine.Ok {
		t.Fatalf("history not linearizable (%s): %s", res, summary)
	}
	if !strings.Contains(summary, " 0 acquired") && strings.Contains(summary, " 0 held,") {
		t.Errorf("no contention: %s", summary)
	}
}

// unconditional strips the conditions of every put of a lease object or a pointer: an
// acquisition without its condition.
type unconditional struct{ driver.Bucket }

func (u unconditional) Unwrap() driver.Bucket { return u.Bucket }

func (u unconditional) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	if strings.Contains(key, LeasePrefix) || strings.Contains(key, PointerPrefix) {
		c := *o
		c.IfMatch, c.IfNoneMatch = "", false
		o = &c
	}
	return u.Bucket.Put(ctx, key, body, o)
}

// latent makes each request of the in-memory store take a millisecond, as a request to a
// server on loopback does, so that racing clients overlap.
type latent struct{ driver.Bucket }

func (l latent) Unwrap() driver.Bucket { return l.Bucket }

func (l latent) Get(ctx context.Context, key string, o *driver.GetOptions) (*driver.Object, error) {
	time.Sleep(time.Millisecond)
	return l.Bucket.Get(ctx, key, o)
}

func (l latent) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	time.Sleep(time.Millisecond)
	return l.Bucket.Put(ctx, key, body, o)
}

func TestHistoryLinearizableOnMem(t *testing.T) {
	s := store.New(latent{memBucket()}, nil)
	verifyHistory(t, s, casResult(s))
}

// A backfill's solo coordinator holds its leases in a cas.Memory (OpenCAS): the same check
// over it.
func TestHistoryLinearizableOnMemory(t *testing.T) {
	kv := latentCAS{cas.NewMemory()}
	verifyOps(t, "cas.Memory", func(o historyOptions) []porcupine.Operation { return runHistory(t, casOpener(kv), o) })
}

// latentCAS makes each call of a cas.Store take a millisecond, as latent does for a bucket.
type latentCAS struct{ cas.Store }

func (l latentCAS) Get(ctx context.Context, key string) ([]byte, string, error) {
	time.Sleep(time.Millisecond)
	return l.Store.Get(ctx, key)
}

func (l latentCAS) Create(ctx context.Context, key string, v []byte) (string, error) {
	time.Sleep(time.Millisecond)
	return l.Store.Create(ctx, key, v)
}

func (l latentCAS) Update(ctx context.Context, key string, v []byte, rev string) (string, error) {
	time.Sleep(time.Millisecond)
	return l.Store.Update(ctx, key, v, rev)
}

// lateCAS applies one write in four some time after it was sent, whether or not its caller
// is still waiting (a store applies a request its client gave up on): a holder's deadline
// cuts some of them in flight, and they land all the same, some after the holder returned.
type lateCAS struct{ latentCAS }

func (l lateCAS) Update(ctx context.Context, key string, v []byte, rev string) (string, error) {
	if rand.IntN(4) != 0 {
		return l.latentCAS.Update(ctx, key, v, rev)
	}
	type result struct {
		rev string
		err error
	}
	done := make(chan result, 1)
	delay := time.Duration(rand.IntN(400)) * time.Millisecond
	go func() {
		time.Sleep(delay)
		r, err := l.Store.Update(context.WithoutCancel(ctx), key, v, rev)
		done <- result{r, err}
	}()
	select {
	case r := <-done:
		return r.rev, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Writes cut in flight at the holder's deadline that land later keep the history
// linearizable: the lease says such a write may have landed (ErrMayHaveLanded).
func TestHistoryLinearizableWithWritesLandingLate(t *testing.T) {
	kv := lateCAS{latentCAS{cas.NewMemory()}}
	var ops []porcupine.Operation
	verifyOps(t, "cas.Memory, writes landing late", func(o historyOptions) []porcupine.Operation {
		ops = runHistory(t, casOpener(kv), o)
		return ops
	})
	cut := 0
	for _, op := range ops {
		if op.Output.(hOutput).unknown {
			cut++
		}
	}
	if cut == 0 {
		t.Errorf("no write was cut in flight: the store's delays did not reach the holders' deadlines")
	}
}

// The checker catches a lease that calls a write cut in flight one that changed nothing.
func TestHistoryCheckerCatchesCutWritesCalledUnchanged(t *testing.T) {
	kv := lateCAS{latentCAS{cas.NewMemory()}}
	o := historySize()
	ops := runHistoryWith(t, casOpener(kv), o, &recorder{start: time.Now(), lie: true})
	res, summary := checkHistory(t, ops)
	t.Logf("broken variant: %s: %s", res, summary)
	if res != porcupine.Illegal {
		t.Fatalf("the checker found a history that calls every cut write unchanged %s, want illegal: %s", res, summary)
	}
}

// The checker is not vacuous: acquisition without its conditions makes it fail.
func TestHistoryCheckerCatchesUnconditionalAcquisition(t *testing.T) {
	s := store.New(unconditional{latent{memBucket()}}, nil)
	o := historySize()
	o.broken = true
	ops := runHistory(t, bucketOpener(s, casResult(s)), o)
	res, summary := checkHistory(t, ops)
	t.Logf("broken variant: %s: %s", res, summary)
	if res != porcupine.Illegal {
		t.Fatalf("the checker found the history of unconditional acquisitions %s, want illegal: %s", res, summary)
	}
}
