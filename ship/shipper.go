package ship

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/iceberg"
	"github.com/wharfdata/wharf/internal/listen"
	"github.com/wharfdata/wharf/internal/sleep"
	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// Spool is what the service needs of a spool; its methods must be safe for concurrent use.
// *spool.Spool satisfies it.
type Spool interface {
	Epoch() uint64
	Info() spool.Info
	Dir() string
	Refresh(ctx context.Context) error
	PendingN(n int) []spool.File
	Waiting() (files, bytes int64, oldest time.Time)
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

// recordDelay is how long the spool gathers uploaded records before it writes and fsyncs
// them together. No upload waits for its record (the slot is free once the store has the
// object), so the delay costs only a later removal of the local file, and saves fsyncs: on
// the benchmark's virtual disk each costs about 0.15 ms of CPU.
const recordDelay = 10 * time.Millisecond

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

	m   *metrics
	tab *tables // nil without Config.Iceberg's datasets

	// removers counts the local retention under way beside the upload loop (retain,
	// removeAfter); the loop waits for it before it returns.
	removers sync.WaitGroup
	// refreshed is when the spool's catalog was last read, for the waits outside the loop
	// (the probe's, a fatal error's), which keep the backlog true.
	refreshed time.Time

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
		s.opts.OpenSpool = func(dir string) (Spool, error) {
			return spool.Open(dir, spool.OpenOptions{Logger: s.log, GroupDelay: recordDelay})
		}
	}
	if s.opts.OpenStore == nil {
		s.opts.OpenStore = store.Open
	}
	s.stat = status{state: StateStarting, started: s.now(), retry: map[uint64]*retryState{},
		inflight: map[uint64]spool.File{}, retaining: map[uint64]bool{}}
	s.m = newMetrics(s)
	if len(cfg.Iceberg.Datasets) > 0 {
		s.tab = newTables(s)
	}
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
	s.stat.epoch, s.stat.sp = fmt.Sprintf("%016x", s.epoch), sp
	s.mu.Unlock()
	defer func() {
		if cerr := sp.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err := s.checkReplay(sp.Info()); err != nil {
		return err // before anything is served or shipped
	}
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
	// The backlog and the spool's gauges are true from the start: while the store is probed
	// (it may be down for long), and if the service never gets past the probe.
	s.refresh(ctx)
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
		"pipeline", s.cfg.Pipeline, "node", s.cfg.Node, "replay", s.cfg.Replay, "conditional_put", s.cfg.ConditionalPut)
	if err := s.decide(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		s.setFatal(err, spool.File{}, "")
		s.refresh(ctx)
		return err
	}
	defer s.tab.close()
	if err := s.openTables(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		s.setFatal(err, spool.File{}, "")
		s.refresh(ctx)
		return err
	}
	return s.loop(ctx)
}

// key is f's key: ReplayKey for a replay, ObjectKey otherwise.
func (s *Shipper) key(f spool.File) string {
	if s.cfg.Replay != "" {
		return ReplayKey(s.cfg.Replay, s.cfg.Pipeline, s.cfg.Node, s.epoch, f)
	}
	return ObjectKey(s.cfg.Pipeline, s.cfg.Node, s.epoch, f)
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
	tag := fmt.Sprintf("ship-%s-%016x", s.cfg.Node, s.epoch)
	for attempt := 1; ; attempt++ {
		res, err := probe.Run(ctx, s.st, &probe.Options{Now: s.now, Tag: tag})
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
				s.stat.standing = 0
				s.mu.Unlock()
				s.log.Info("put mode decided", "conditional_put", s.cfg.ConditionalPut, "put_mode", mode,
					"conditional_create", res.Capabilities[probe.CapConditionalCreate].Verdict)
				return nil
			}
			s.probeFailed(s.inconclusive(res))
		} else {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, store.ErrBucketMissing) {
				// Not an outage: waiting cannot make the bucket appear, and wharf never
				// creates one behind the user's back.
				return s.bucketMissing(err)
			}
			err = fmt.Errorf("probing %s: %w", s.loc, err)
			if s.cfg.ConditionalPut == PutOverwrite && s.tab == nil {
				// overwrite does not depend on the probe: the uploads will retry.
				s.log.Warn("probe failed; conditional_put is overwrite, so shipping starts anyway", "error", err)
				s.warnClock(err)
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
		if err := s.pause(ctx, d); err != nil {
			return err
		}
	}
}

// openTables opens the Iceberg tables (Config.Iceberg), retrying a store that fails
// transiently; a store not proven to enforce conditional writes is fatal.
func (s *Shipper) openTables(ctx context.Context) error {
	if s.tab == nil {
		return nil
	}
	for attempt := 1; ; attempt++ {
		err := s.tab.open(ctx)
		if err == nil || isFatal(err) || errors.Is(err, probe.ErrCoordinationUnproven) || errors.Is(err, iceberg.ErrMetadataInvalid) {
			return err
		}
		s.probeFailed(err)
		if err := s.pause(ctx, s.cfg.Retry.Delay(attempt, s.rnd)); err != nil {
			return err
		}
	}
}

// inconclusive is the error of a probe that could not show whether the store enforces
// conditional create: with the code of the failure that stopped it (refused credentials,
// a store that does not answer), so that /status, /healthz and the logs can name it.
func (s *Shipper) inconclusive(res *probe.Result) error {
	c := res.Capabilities[probe.CapConditionalCreate]
	kind := probe.ErrInconclusive
	if k, ok := errcode.Lookup(c.Cause); ok {
		kind = k
	}
	return &store.Error{Op: "probe", Key: s.loc, Kind: kind, Err: fmt.Errorf(
		"the probe could not show whether the store enforces conditional create: %s", c.Evidence)}
}

// bucketMissing is the fatal error of a destination whose bucket (container, directory) does
// not exist, with the one command that makes it: `wharf mb` of the bucket alone (with the
// endpoint of an S3-compatible server). The store's own text (which has its own generic hint) is kept
// out of the message, the store's answer in: it is said once.
func (s *Shipper) bucketMissing(err error) error {
	mb := strings.TrimSuffix(strings.TrimSuffix(s.loc+"/", s.st.Prefix()), "/")
	desc := s.st.Describe()
	if loc, err := store.ParseURL(mb); err == nil {
		if dir, ok := loc.LocalPath(); ok {
			mb = dir
		}
	}
	cmd := "wharf mb " + mb
	if desc.Endpoint != "" {
		cmd = "wharf --endpoint " + desc.Endpoint + " mb " + mb // an emulator's or S3-compatible server's
	}
	answer := ""
	var se *store.Error
	if errors.As(err, &se) && se.Status != 0 {
		answer = fmt.Sprintf(" (HTTP %d %s)", se.Status, se.Reason)
	}
	return &fatalError{err: err, msg: fmt.Sprintf(
		"probing %s: the destination's %s %s does not exist%s; wharf ship never creates it: make it with `%s`, then start wharf ship again",
		s.loc, desc.BucketNoun(), mb, answer, cmd)}
}

// fatalError is an error with a message of the service's own making that still unwraps to
// the error it explains (for its code).
type fatalError struct {
	err error
	msg string
}

func (e *fatalError) Error() string { return e.msg }
func (e *fatalError) Unwrap() error { return e.err }

// pause waits d or until ctx ends, keeping the backlog true meanwhile (the catalog re-read
// every poll interval).
func (s *Shipper) pause(ctx context.Context, d time.Duration) error {
	end := s.now().Add(d)
	for {
		left := end.Sub(s.now())
		if left <= 0 {
			return nil
		}
		if err := sleep.For(ctx, min(left, s.cfg.PollInterval)); err != nil {
			return err
		}
		if s.now().Sub(s.refreshed) >= s.cfg.PollInterval {
			s.refresh(ctx)
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
	s.log.Warn("probe failed", "code", errcode.NameOf(err), "error", err)
	s.warnClock(err)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stat.probeFailing.IsZero() {
		s.stat.probeFailing = s.now()
	}
	s.failedLocked(&ErrorInfo{Time: s.now().UTC(), Message: err.Error(), Code: errcode.NameOf(err)}, err)
}

// serve starts the HTTP endpoints unless Listen is off, and returns how to stop them.
func (s *Shipper) serve() (func(), error) {
	srv, err := listen.Serve(s.cfg.Listen, s.Handler(), s.log)
	if err != nil {
		return nil, errcode.E("listen", s.cfg.Listen, ErrListen, err)
	}
	if srv.Addr != nil {
		if s.opts.Listening != nil {
			s.opts.Listening(srv.Addr)
		}
		s.log.Info("serving the status page, /metrics, /status and /healthz", "listen", srv.Addr.String())
	}
	return srv.Stop, nil
}

// ErrListen: the address of Config.Listen cannot be served.
var ErrListen = errcode.New(errcode.Def{Name: "WHARF_SHIP_LISTEN_FAILED",
	Text: "cannot serve /metrics, /status and /healthz on the listen address", Exit: errcode.ExitFailed, Class: errcode.Operator, Section: "Ship",
	Meaning: "The address given by `listen` (`--listen`) cannot be bound: another process listens on that port (address already in use), the address is not one of this machine's, or the port is below 1024 and the process may not bind it. The message names the address and the system's answer. Nothing was shipped.",
	Remedy:  "Give another address (`--listen 127.0.0.1:9465`), or `off` for no endpoints, or stop what holds the port (`ss -ltnp` shows it)."})
