package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

// Contention checks, by their JSON names.
const (
	CheckOneWinner      = "one_winner_per_create"    // exactly one of N racing creates wins each round
	CheckNoLostUpdate   = "no_lost_update"           // N writers incrementing under If-Match lose no increment
	CheckStaleDelete    = "stale_delete_refused"     // a delete with a superseded ETag fails
	CheckReadsAreWrites = "reads_see_written_values" // every read returns a value some writer wrote
)

// ContentionChecks lists the checks in report order.
var ContentionChecks = []string{CheckOneWinner, CheckNoLostUpdate, CheckStaleDelete, CheckReadsAreWrites}

// Check verdicts.
const (
	Pass = "pass"
	Fail = "fail"
)

// ContentionOptions size the race.
type ContentionOptions struct {
	Writers int // concurrent writers, at least 2
	Rounds  int // rounds of each race, at least 1
	// IncrementsPerWriter is how many successful If-Match increments each writer makes per
	// round; 0 means 2.
	IncrementsPerWriter int
}

// CheckResult is one contention check's outcome.
type CheckResult struct {
	Verdict  string   `json:"verdict"` // Pass, Fail or Inconclusive
	Evidence string   `json:"evidence"`
	Examples []string `json:"examples,omitempty"` // up to five violations
}

// ContentionResult is what Contention found.
type ContentionResult struct {
	Store    store.Description      `json:"store"`
	Writers  int                    `json:"writers"`
	Rounds   int                    `json:"rounds"`
	Checks   map[string]CheckResult `json:"checks"`
	Requests int                    `json:"requests"`
	Errors   int                    `json:"errors"` // requests that failed without showing a condition
	Passed   bool                   `json:"passed"` // every check passed
	Duration time.Duration          `json:"-"`
}

// Contention races opts.Writers concurrent writers on keys under Prefix for
// opts.Rounds rounds and checks the recorded history: exactly one winner per create round, no
// lost update among If-Match increments, no stale conditional delete succeeding, and every read
// seeing a value some writer wrote. It deletes what it wrote. It returns an error only when it
// cannot run at all (a missing bucket, a cancelled ctx).
func Contention(ctx context.Context, s *store.Store, opts ContentionOptions) (*ContentionResult, error) {
	if opts.Writers < 2 || opts.Rounds < 1 {
		return nil, &store.Error{Op: "probe", Kind: store.ErrConfig, Err: fmt.Errorf("contention needs at least 2 writers and 1 round (got %d, %d)", opts.Writers, opts.Rounds)}
	}
	if opts.IncrementsPerWriter <= 0 {
		opts.IncrementsPerWriter = 2
	}
	start := time.Now()
	c := &contention{s: s, o: opts, base: Prefix + "contention-" + driver.NewPutID()[:12] + "/", hist: map[string][]string{}}
	defer c.cleanup()
	for r := 0; r < opts.Rounds; r++ {
		if err := c.createRound(ctx, r); err != nil {
			return nil, err
		}
		if err := c.replaceRound(ctx, r); err != nil {
			return nil, err
		}
	}
	res := &ContentionResult{Store: s.Describe(), Writers: opts.Writers, Rounds: opts.Rounds,
		Checks: c.verdicts(), Requests: c.requests, Errors: c.errors, Duration: time.Since(start)}
	res.Passed = true
	for _, ch := range res.Checks {
		res.Passed = res.Passed && ch.Verdict == Pass
	}
	return res, nil
}

type contention struct {
	s    *store.Store
	o    ContentionOptions
	base string

	mu        sync.Mutex
	requests  int
	errors    int
	keys      []string
	hist      map[string][]string // check → violations
	createOK  int                 // rounds with exactly one winner
	createRun int
	lostOK    int
	lostRun   int
	deleteOK  int
	deleteRun int
	reads     int
}

func (c *contention) note(check, format string, a ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hist[check] = append(c.hist[check], fmt.Sprintf(format, a...))
}

func (c *contention) count(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	if err != nil && !errors.Is(err, store.ErrPreconditionFailed) && !errors.Is(err, store.ErrNotExist) {
		c.errors++
	}
}

func (c *contention) put(ctx context.Context, key string, body string, o *store.PutOptions) (store.ObjectInfo, error) {
	o.Size = int64(len(body))
	info, err := c.s.Put(ctx, key, strings.NewReader(body), o)
	c.count(err)
	if errors.Is(err, store.ErrOutcomeUnknown) {
		// Settle it by the put-id, as every wharf caller does.
		var e *store.Error
		if errors.As(err, &e) && e.PutID != "" {
			if got, landed, herr := c.s.ResolvePut(ctx, key, e.PutID); herr == nil {
				if landed {
					return got, nil
				}
				return store.ObjectInfo{}, &store.Error{Op: "put", Key: key, Kind: store.ErrPreconditionFailed}
			}
		}
	}
	return info, err
}

func (c *contention) read(ctx context.Context, key string) (string, store.ObjectInfo, error) {
	obj, err := c.s.Get(ctx, key, nil)
	c.count(err)
	if err != nil {
		return "", store.ObjectInfo{}, err
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	return string(b), obj.Info, err
}

// race runs fn for each writer at once and waits for all.
func (c *contention) race(fn func(w int)) {
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for w := 0; w < c.o.Writers; w++ {
		wg.Go(func() {
			<-gate
			fn(w)
		})
	}
	close(gate)
	wg.Wait()
}

func (c *contention) createRound(ctx context.Context, r int) error {
	key := fmt.Sprintf("%screate-%03d", c.base, r)
	c.keys = append(c.keys, key)
	var mu sync.Mutex
	var winners []string
	var fatal error
	c.race(func(w int) {
		v := fmt.Sprintf("writer-%d-round-%d", w, r)
		_, err := c.put(ctx, key, v, &store.PutOptions{IfNoneMatch: true})
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			winners = append(winners, v)
		case errors.Is(err, store.ErrBucketMissing) || driver.IsContext(err):
			fatal = err
		}
	})
	if fatal != nil {
		return fatal
	}
	got, _, err := c.read(ctx, key)
	if err != nil {
		return nil
	}
	c.createRun++
	switch {
	case len(winners) == 1 && got == winners[0]:
		c.createOK++
	case len(winners) == 1:
		c.note(CheckOneWinner, "round %d: %s won but the object holds %q", r, winners[0], got)
	default:
		c.note(CheckOneWinner, "round %d: %d creates succeeded (%s); the object holds %q", r, len(winners), strings.Join(winners, ", "), got)
	}
	return nil
}

func (c *contention) replaceRound(ctx context.Context, r int) error {
	key := fmt.Sprintf("%scounter-%03d", c.base, r)
	c.keys = append(c.keys, key)
	first, err := c.put(ctx, key, "0 init", &store.PutOptions{})
	if err != nil {
		if errors.Is(err, store.ErrBucketMissing) || driver.IsContext(err) {
			return err
		}
		return nil
	}
	written := map[string]bool{"0 init": true}
	var mu sync.Mutex
	var applied int
	stop := make(chan struct{})
	readerDone := make(chan []string)
	go func() { readerDone <- c.readLoop(ctx, key, stop) }()
	c.race(func(w int) {
		for done, tries := 0, 0; done < c.o.IncrementsPerWriter && tries < 40*c.o.Writers && ctx.Err() == nil; tries++ {
			v, info, err := c.read(ctx, key)
			if err != nil {
				continue
			}
			n, _ := strconv.Atoi(strings.Fields(v + " x")[0])
			next := fmt.Sprintf("%d writer-%d", n+1, w)
			mu.Lock()
			written[next] = true
			mu.Unlock()
			if _, err := c.put(ctx, key, next, &store.PutOptions{IfMatch: info.ETag}); err == nil {
				done++
				mu.Lock()
				applied++
				mu.Unlock()
			}
		}
	})
	close(stop)
	seen := <-readerDone
	final, _, err := c.read(ctx, key)
	if err == nil {
		n, _ := strconv.Atoi(strings.Fields(final + " x")[0])
		c.lostRun++
		if n == applied {
			c.lostOK++
		} else {
			c.note(CheckNoLostUpdate, "round %d: %d increments succeeded under If-Match but the counter reads %d (%d lost)", r, applied, n, applied-n)
		}
	}
	for _, v := range seen {
		if !written[v] {
			c.note(CheckReadsAreWrites, "round %d: read %q, which no writer wrote", r, v)
		}
	}
	c.staleDelete(ctx, key, first.ETag, r)
	return nil
}

// readLoop reads key until stop closes and returns every distinct value it saw.
func (c *contention) readLoop(ctx context.Context, key string, stop <-chan struct{}) []string {
	seen := map[string]bool{}
	for {
		select {
		case <-stop:
			var out []string
			for v := range seen {
				out = append(out, v)
			}
			return out
		default:
		}
		if v, _, err := c.read(ctx, key); err == nil {
			seen[v] = true
			c.mu.Lock()
			c.reads++
			c.mu.Unlock()
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

func (c *contention) staleDelete(ctx context.Context, key, stale string, r int) {
	err := c.s.Delete(ctx, key, &store.DeleteOptions{IfMatch: stale})
	c.count(err)
	_, herr := c.s.Head(ctx, key)
	c.count(herr)
	switch {
	case errors.Is(err, store.ErrPreconditionFailed) && herr == nil:
		c.deleteRun++
		c.deleteOK++
	case err == nil && errors.Is(herr, store.ErrNotExist):
		c.deleteRun++
		c.note(CheckStaleDelete, "round %d: a delete with the superseded ETag %s deleted the object", r, stale)
	case errors.Is(err, store.ErrPreconditionFailed) && errors.Is(herr, store.ErrNotExist):
		c.deleteRun++
		c.note(CheckStaleDelete, "round %d: a delete with a superseded ETag was refused yet the object is gone", r)
	}
}

func (c *contention) verdicts() map[string]CheckResult {
	out := map[string]CheckResult{}
	judge := func(check string, ok, run int, what string) {
		v := c.hist[check]
		r := CheckResult{Examples: v[:min(len(v), 5)]}
		switch {
		case len(v) > 0:
			r.Verdict = Fail
			r.Evidence = fmt.Sprintf("%d violation(s) in %d %s", len(v), max(run, len(v)), what)
		case run == 0:
			r.Verdict = Inconclusive
			r.Evidence = fmt.Sprintf("no %s completed (%d requests failed without showing a condition)", what, c.errors)
		default:
			r.Verdict = Pass
			r.Evidence = fmt.Sprintf("%d of %d %s held", ok, run, what)
		}
		out[check] = r
	}
	judge(CheckOneWinner, c.createOK, c.createRun, fmt.Sprintf("create races of %d writers", c.o.Writers))
	judge(CheckNoLostUpdate, c.lostOK, c.lostRun, fmt.Sprintf("If-Match increment races of %d writers", c.o.Writers))
	judge(CheckStaleDelete, c.deleteOK, c.deleteRun, "stale conditional deletes")
	judge(CheckReadsAreWrites, c.reads, c.reads, "reads during the increment races")
	return out
}

func (c *contention) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, k := range c.keys {
		_ = c.s.Delete(ctx, k, nil)
	}
}
