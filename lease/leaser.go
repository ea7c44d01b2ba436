package lease

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// Modes of a Leaser.
const (
	// ModeBucket: leases are records in the store (a store proven cas).
	ModeBucket = "bucket"
	// ModeCAS: leases are records in a compare-and-set store that is not a bucket (NATS
	// JetStream key-value), opened with OpenCAS.
	ModeCAS = "cas"
	// ModeMachine: leases are lock files on this machine (a file store the probe resolves
	// single-writer); nothing is written to the store to acquire one.
	ModeMachine = "machine"
)

// Options are what a Leaser is given besides its Config.
type Options struct {
	// Probe is the store's probe result, when the caller has one; nil makes Open probe.
	// OpenCAS has no probe.
	Probe *probe.Result
	// Verdicts, when set, remembers probe verdicts across processes: a fresh remembered cas
	// verdict for the store spares Open its probe (13 requests), and a probe Open runs is
	// remembered (see probe.Verdicts.Coordination). The check that the store still enforces
	// conditions (every CheckEvery acquisitions) is counted there too, across processes, and
	// a store found not to enforce them any more is forgotten there.
	Verdicts *probe.Verdicts
	// Clock is the clock expiry is judged by; nil is SystemClock.
	Clock Clock
	// Logger receives what a lease does (nil discards).
	Logger *slog.Logger
	// Fresh says that no wharf of record format 1 (before the lease record carried the log's
	// head) ever kept leases in the store: a missing lease record is then no lease at all,
	// and the Leaser does not look for a format-1 pointer beside it (one request less to
	// acquire a name for the first time). A store of a backfill job's own records is fresh.
	Fresh bool

	// checkEvery overrides CheckEvery in tests; < 0 never checks.
	checkEvery int
}

// Leaser takes leases in one store and commits to their logs. It is safe for concurrent use.
type Leaser struct {
	kv     cas.Store
	s      *store.Store // nil for OpenCAS
	cfg    Config
	clock  Clock
	log    *slog.Logger
	mode   string
	reason string // why this mode, from the probe
	check  *checker

	wmu     sync.Mutex
	watches map[string]watch // what this Leaser saw of each name held by another
}

// Open returns a Leaser over s. It checks cfg and decides, from the probe (run now unless
// opts has its result or a remembered cas verdict), how leases are held: ModeBucket on a
// store proven cas; ModeMachine on a file store resolved single-writer (a network mount
// type), unless cfg asks for cas, which fails ErrCoordinationUnproven naming why, as does
// every other store not proven cas. A bucket lease under the node id "local" fails
// ErrNodeIDLocal.
func Open(ctx context.Context, s *store.Store, cfg Config, opts *Options) (*Leaser, error) {
	l, o, err := newLeaser(cas.NewBucket(s), cfg, opts)
	if err != nil {
		return nil, err
	}
	l.s = s
	res := o.Probe
	if res == nil {
		if res, err = o.Verdicts.Coordination(ctx, s); err != nil {
			return nil, err
		}
	}
	if err := l.decide(res); err != nil {
		return nil, err
	}
	if o.Verdicts != nil && res.Coordination == probe.CAS && !s.Describe().Local() {
		l.check.verdicts, l.check.desc = o.Verdicts, s.Describe()
	}
	return l, nil
}

// OpenCAS returns a Leaser whose leases are records in kv (NATS JetStream key-value, or any
// cas.Store that enforces its conditions by its protocol): ModeCAS, the same acquisitions,
// renewals, commits, releases, skew rule and check as a bucket's, without a probe.
// opts.Probe and opts.Verdicts are not used.
func OpenCAS(kv cas.Store, cfg Config, opts *Options) (*Leaser, error) {
	l, _, err := newLeaser(kv, cfg, opts)
	if err != nil {
		return nil, err
	}
	l.mode, l.reason = ModeCAS, "a compare-and-set store: "+kv.Describe()
	return l, nil
}

func newLeaser(kv cas.Store, cfg Config, opts *Options) (*Leaser, Options, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := cfg.Check(); err != nil {
		return nil, o, err
	}
	// The record carries the TTL in milliseconds, and contenders judge by that: the holder's
	// deadline must not count on more.
	if cfg.TTL = cfg.TTL.Truncate(time.Millisecond); cfg.Renewal() >= cfg.TTL-cfg.Skew || cfg.Skew >= cfg.TTL {
		return nil, o, cfg.Check()
	}
	if o.Fresh {
		kv = noPointers{kv}
	}
	l := &Leaser{kv: kv, cfg: cfg, clock: o.Clock, log: o.Logger, check: &checker{every: CheckEvery}}
	if o.checkEvery != 0 {
		l.check.every = o.checkEvery
	}
	if l.clock == nil {
		l.clock = SystemClock()
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	return l, o, nil
}

func (l *Leaser) decide(res *probe.Result) error {
	l.reason = res.Reason
	switch {
	case res.Coordination == probe.CAS:
		l.mode = ModeBucket
	case l.cfg.Coordination == CoordinationAuto && res.Store.Local() && res.Store.MountType != "":
		l.mode = ModeMachine
		l.log.Warn("lease: the store is single-writer: taking machine leases (a lock file on this machine), which do not exclude other machines",
			"store", res.Store.Location, "mount_type", res.Store.MountType)
		return nil
	default:
		return res.RequireCAS()
	}
	return nil
}

// Mode is ModeBucket, ModeCAS or ModeMachine.
func (l *Leaser) Mode() string { return l.mode }

// Reason says why the probe gave this mode.
func (l *Leaser) Reason() string { return l.reason }

// Config is the Leaser's config.
func (l *Leaser) Config() Config { return l.cfg }

// Store is the store the leases are in; nil for a Leaser of OpenCAS.
func (l *Leaser) Store() *store.Store { return l.s }

// Records is the compare-and-set store the lease records are in.
func (l *Leaser) Records() cas.Store { return l.kv }

// Log returns the reader of name's commit log.
func (l *Leaser) Log(name string) *Log { return &Log{kv: l.kv, name: name} }

func (l *Leaser) String() string {
	return fmt.Sprintf("%s leases in %s", l.mode, l.kv.Describe())
}

// noPointers is a store that never held a format-1 pointer (Options.Fresh): a read of one is
// answered without a request.
type noPointers struct{ cas.Store }

func (n noPointers) Get(ctx context.Context, key string) ([]byte, string, error) {
	if strings.HasPrefix(key, PointerPrefix) {
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		return nil, "", cas.ErrNoRecord
	}
	return n.Store.Get(ctx, key)
}
