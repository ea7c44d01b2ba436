package lease

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// Modes of a Leaser.
const (
	// ModeBucket: leases are objects in the store, fenced through its pointer (a store proven
	// cas).
	ModeBucket = "bucket"
	// ModeMachine: leases are lock files on this machine (a file store the probe resolves
	// single-writer); nothing is written to the store to acquire one.
	ModeMachine = "machine"
)

// Options are what a Leaser is given besides its Config.
type Options struct {
	// Probe is the store's probe result, when the caller has one; nil makes Open probe.
	Probe *probe.Result
	// Verdicts, when set, remembers probe verdicts across processes: a fresh remembered cas
	// verdict for the store spares Open its probe (13 requests), and a probe Open runs is
	// remembered (see probe.Verdicts.Coordination).
	Verdicts *probe.Verdicts
	// Clock is the clock expiry is judged by; nil is SystemClock.
	Clock Clock
	// Logger receives what a lease does (nil discards).
	Logger *slog.Logger
}

// Leaser takes leases in one store and commits to their logs. It is safe for concurrent use.
type Leaser struct {
	s      *store.Store
	cfg    Config
	clock  Clock
	log    *slog.Logger
	mode   string
	reason string // why this mode, from the probe
}

// Open returns a Leaser over s. It checks cfg and decides, from the probe (run now unless
// opts has its result or a remembered cas verdict), how leases are held: ModeBucket on a
// store proven cas; ModeMachine on a file store resolved single-writer (a network mount
// type), unless cfg asks for cas, which fails ErrCoordinationUnproven naming why, as does
// every other store not proven cas. A bucket lease under the node id "local" fails
// ErrNodeIDLocal.
func Open(ctx context.Context, s *store.Store, cfg Config, opts *Options) (*Leaser, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	l := &Leaser{s: s, cfg: cfg, clock: o.Clock, log: o.Logger}
	if l.clock == nil {
		l.clock = SystemClock()
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	res := o.Probe
	if res == nil {
		var err error
		if res, err = o.Verdicts.Coordination(ctx, s); err != nil {
			return nil, err
		}
	}
	if err := l.decide(res); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Leaser) decide(res *probe.Result) error {
	l.reason = res.Reason
	switch {
	case res.Coordination == probe.CAS:
		l.mode = ModeBucket
	case l.cfg.Coordination == CoordinationAuto && res.Store.Scheme == "file" && res.Store.MountType != "":
		l.mode = ModeMachine
		l.log.Warn("lease: the store is single-writer: taking machine leases (a lock file on this machine), which do not exclude other machines",
			"store", res.Store.Location, "mount_type", res.Store.MountType)
		return nil
	default:
		return res.RequireCAS()
	}
	return nil
}

// Mode is ModeBucket or ModeMachine.
func (l *Leaser) Mode() string { return l.mode }

// Reason says why the probe gave this mode.
func (l *Leaser) Reason() string { return l.reason }

// Config is the Leaser's config.
func (l *Leaser) Config() Config { return l.cfg }

// Store is the store the leases are in.
func (l *Leaser) Store() *store.Store { return l.s }

// Log returns the reader of name's commit log.
func (l *Leaser) Log(name string) *Log { return &Log{s: l.s, name: name} }

func (l *Leaser) String() string {
	return fmt.Sprintf("%s leases in %s", l.mode, l.s.Describe().Location)
}
