package ship

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// Spool is what the service needs of a spool; its methods must be safe for concurrent use.
// *spool.Spool satisfies it.
type Spool interface {
	Epoch() uint64
	Dir() string
	Refresh(ctx context.Context) error
	Pending() []spool.File
	Uploaded(ctx context.Context, id uint64, key, etag, outcome string) error
	Retained() []spool.File
	Remove(ctx context.Context, id uint64) error
	Stats() spool.Stats
	Close() error
}

var _ Spool = (*spool.Spool)(nil)

// Options are what the service takes besides its Config: the logger and, for tests, the
// clock, the randomness and test hooks. The zero value is ready to use.
type Options struct {
	Logger *slog.Logger     // nil: discard
	Now    func() time.Time // nil: time.Now
	Rand   func() float64   // uniform in [0, 1); nil: math/rand/v2

	// OpenSpool opens the spool; nil: spool.Open.
	OpenSpool func(dir string) (Spool, error)
	// OpenStore opens the destination; nil: store.Open.
	OpenStore func(ctx context.Context, raw string, cfg *store.Config) (*store.Store, error)
	// Listening is told the address the HTTP endpoints are bound to.
	Listening func(addr net.Addr)

	Hooks Hooks
}

// Hooks let tests reach into an upload. Production code leaves them nil.
type Hooks struct {
	// Body wraps the body of every put (a test slows it, or stops the process mid-upload).
	Body func(f spool.File, r io.Reader) io.Reader
	// Point is called at named points of a file's shipping: "after-put" (the store has the
	// object; the spool has no record of it yet) and "after-record" (recorded; local
	// retention not applied yet).
	Point func(name string, f spool.File)
}

// removeTimeout bounds spool writes and deletes made after the service was told to stop.
const removeTimeout = 30 * time.Second

// Shipper is the ship service. Make one with New and run it with Run; Handler serves its
// HTTP endpoints and Status its state at any time, from any goroutine.
type Shipper struct {
	cfg   Config
	opts  Options
	log   *slog.Logger
	now   func() time.Time
	rnd   func() float64
	parts budget

	// Set by Run before the first upload, then read-only.
	sp    Spool
	st    *store.Store
	loc   string // the destination, without credentials
	epoch uint64
	mode  PutMode

	m *metrics

	// removers counts the local retention under way beside the upload loop (retain,
	// removeAfter); the loop waits for it before it returns.
	removers sync.WaitGroup

	mu   sync.Mutex // guards what follows
	stat status
}

// New checks cfg and returns a Shipper ready to Run.
func New(cfg Config, opts Options) (*Shipper, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	s := &Shipper{cfg: cfg, opts: opts, log: opts.Logger, now: opts.Now, rnd: opts.Rand,
		parts: make(budget, cfg.UploadConcurrency)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.rnd == nil {
		s.rnd = rand.Float64
	}
	if s.opts.OpenSpool == nil {
		s.opts.OpenSpool = func(dir string) (Spool, error) { return spool.Open(dir, spool.OpenOptions{Logger: s.log}) }
	}
	if s.opts.OpenStore == nil {
		s.opts.OpenStore = store.Open
	}
	s.stat = status{state: StateStarting, started: s.now(), retry: map[uint64]*retryState{},
		inflight: map[uint64]spool.File{}, retaining: map[uint64]bool{}}
	s.m = newMetrics(s)
	return s, nil
}

// Run opens the spool and the store, probes the store, and ships until ctx ends (or, with
// Config.Drain, until nothing is left to ship). See the package documentation for what it
// promises. It returns nil after a stop, and a fatal error when shipping had to stop.
func Run(ctx context.Context, cfg Config, opts Options) error {
	s, err := New(cfg, opts)
	if err != nil {
		return err
	}
	return s.Run(ctx)
}

// Run runs the service; call it once.
func (s *Shipper) Run(ctx context.Context) (err error) {
	sp, err := s.opts.OpenSpool(s.cfg.Spool)
	if err != nil {
		return err
	}
	s.sp, s.epoch = sp, sp.Epoch()
	s.mu.Lock()
	s.stat.epoch = fmt.Sprintf("%016x", s.epoch)
	s.mu.Unlock()
	defer func() {
		if cerr := sp.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	stopHTTP, err := s.serve()
	if err != nil {
		return err
	}
	defer stopHTTP()
	defer func() {
		s.setState(StateStopped)
		st := s.Status()
		s.log.Info("ship stopped", "uploaded", st.Uploaded, "backlog_files", st.Backlog.Files, "state", st.State)
	}()
	st, err := s.opts.OpenStore(ctx, s.cfg.To, &s.cfg.Store)
	if err != nil {
		return fmt.Errorf("%s: %w", redactURL(s.cfg.To), err)
	}
	defer st.Close()
	s.st, s.loc = st, strings.TrimSuffix(st.Describe().Location, "/")
	s.mu.Lock()
	s.stat.dest = s.loc
	s.mu.Unlock()
	s.log.Info("ship starting", "spool", sp.Dir(), "epoch", fmt.Sprintf("%016x", s.epoch), "to", s.loc,
		"pipeline", s.cfg.Pipeline, "node", s.cfg.Node, "conditional_put", s.cfg.ConditionalPut)
	if err := s.decide(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		s.setFatal(err, spool.File{}, "")
		return err
	}
	return s.loop(ctx)
}

// where names key in the destination, for messages: the location and the key.
func (s *Shipper) where(key string) string { return s.loc + "/" + key }

// redactURL drops anything after '?' and any user info, for messages about a URL that
// failed to open.
func redactURL(raw string) string {
	raw, _, _ = strings.Cut(raw, "?")
	if scheme, rest, ok := strings.Cut(raw, "://"); ok {
		if at := strings.IndexByte(rest, '@'); at >= 0 && at < strings.IndexByte(rest+"/", '/') {
			rest = rest[at+1:]
		}
		return scheme + "://" + rest
	}
	return raw
}

// decide runs the startup probe and chooses the put mode. Until the probe can show whether
// the store enforces conditional create, it is run again with the retry backoff: a store
// that is unreachable at start is never taken for one without conditional writes.
func (s *Shipper) decide(ctx context.Context) error {
	s.setState(StateProbing)
	for attempt := 1; ; attempt++ {
		res, err := probe.Run(ctx, s.st, &probe.Options{Now: s.now})
		if err == nil {
			s.logProbe(res)
			s.mu.Lock()
			s.stat.probe = res
			s.mu.Unlock()
			mode, again, err := s.modeFor(res)
			if err != nil {
				return err
			}
			if !again {
				s.mode = mode
				s.mu.Lock()
				s.stat.mode, s.stat.probeFailing = mode, time.Time{}
				s.mu.Unlock()
				s.log.Info("put mode decided", "conditional_put", s.cfg.ConditionalPut, "put_mode", mode,
					"conditional_create", res.Capabilities[probe.CapConditionalCreate].Verdict)
				return nil
			}
			err = fmt.Errorf("the probe could not show whether %s enforces conditional create: %s",
				s.loc, res.Capabilities[probe.CapConditionalCreate].Evidence)
			s.probeFailed(err)
		} else {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, store.ErrBucketMissing) {
				// Not an outage: waiting cannot make the bucket appear, and wharf never
				// creates one behind the user's back.
				return fmt.Errorf("probing %s: %w (make it first, e.g. wharf mb %s)", s.loc, err, s.loc)
			}
			err = fmt.Errorf("probing %s: %w", s.loc, err)
			if s.cfg.ConditionalPut == PutOverwrite {
				// overwrite does not depend on the probe: the uploads will retry.
				s.log.Warn("probe failed; conditional_put is overwrite, so shipping starts anyway", "error", err)
				s.mode = PutOverwrite
				s.mu.Lock()
				s.stat.mode = PutOverwrite
				s.mu.Unlock()
				return nil
			}
			s.probeFailed(err)
		}
		d := s.cfg.Retry.Delay(attempt, s.rnd)
		s.log.Warn("probe again", "attempt", attempt, "retry_in", d)
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}

// modeFor maps the probe's verdict on conditional create to the put mode; again means probe
// again.
func (s *Shipper) modeFor(res *probe.Result) (mode PutMode, again bool, err error) {
	c := res.Capabilities[probe.CapConditionalCreate]
	switch {
	case s.cfg.ConditionalPut == PutOverwrite:
		return PutOverwrite, false, nil
	case c.Verdict == probe.Yes:
		return PutCreate, false, nil
	case c.Verdict == probe.Inconclusive:
		return "", true, nil
	case s.cfg.ConditionalPut == PutCreate:
		return "", false, &store.Error{Op: "probe", Key: s.loc, Kind: probe.ErrCoordinationUnproven, Err: fmt.Errorf(
			"conditional_put is create, but this store does not enforce create-if-absent (%s); "+
				"use conditional_put: auto to ship with plain puts verified by HEAD, or a store that enforces it", c.Evidence)}
	}
	s.log.Warn("the store does not enforce create-if-absent: shipping with plain puts, each key checked by HEAD before and verified after; "+
		"a collision is caught after the fact, not refused", "to", s.loc, "evidence", c.Evidence)
	return PutOverwrite, false, nil
}

func (s *Shipper) logProbe(res *probe.Result) {
	attrs := []any{"to", s.loc, "coordination", res.Coordination, "reason", res.Reason,
		"clock_skew_seconds", res.ClockSkewSeconds}
	for _, c := range probe.Capabilities {
		attrs = append(attrs, c, res.Capabilities[c].Verdict)
	}
	s.log.Info("probe", attrs...)
	if res.ClockSkewWarning != "" {
		s.log.Warn("clock skew", "to", s.loc, "clock_skew_seconds", res.ClockSkewSeconds, "warning", res.ClockSkewWarning)
	}
}

func (s *Shipper) probeFailed(err error) {
	s.log.Warn("probe failed", "error", err)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stat.probeFailing.IsZero() {
		s.stat.probeFailing = s.now()
	}
	s.stat.lastErr = &ErrorInfo{Time: s.now().UTC(), Message: err.Error(), Code: errcode.NameOf(err)}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// serve starts the HTTP endpoints unless Listen is off, and returns how to stop them.
func (s *Shipper) serve() (func(), error) {
	if s.cfg.Listen == ListenOff {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return nil, &store.Error{Op: "listen", Key: s.cfg.Listen, Kind: store.ErrConfig, Err: err}
	}
	if s.opts.Listening != nil {
		s.opts.Listening(ln.Addr())
	}
	s.log.Info("serving /metrics, /status and /healthz", "listen", ln.Addr().String())
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("serving the HTTP endpoints", "error", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}
