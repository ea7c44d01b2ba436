package backfill

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// Options are what a Job is given besides its Config.
type Options struct {
	Coordinator Coordinator
	// Source is the store the source URL names, opened at its bucket's root; Prefix is the
	// URL's key: every object whose key starts with it is read.
	Source *store.Store
	Prefix string
	Sink   Sink
	Logger *slog.Logger // nil: discard
	// Replan lists the prefix again when the job's current plan has finished: a new object
	// or a new version of one becomes a new split, done splits stay done, and quarantined
	// ones are tried again.
	Replan bool
	Now    func() time.Time // nil: time.Now
}

// Job is one worker of a backfill: run the same job (same Config.Job and coordinator) on
// several machines and they share it.
type Job struct {
	cfg   Config
	opt   Options
	src   *store.Store
	coord Coordinator
	sink  Sink
	log   *slog.Logger
	now   func() time.Time
	obs   *observer
	lead  *leadership
	m     *metrics
	rd    reader
	bufs  *bufPool
	// decoding holds a token for each member being decoded: at most as many as there are
	// processors, however many splits are in flight.
	decoding chan struct{}

	plan  *Plan
	ids   []string
	descs sync.Map // split id → *Split

	mu   sync.Mutex
	stat status
	wake chan struct{}
}

// New returns a worker of the job cfg describes. cfg must have passed Check.
func New(cfg Config, opt Options) (*Job, error) {
	if opt.Coordinator == nil || opt.Source == nil || opt.Sink == nil {
		return nil, configErr("a job needs a coordinator, a source store and a sink")
	}
	if cfg.Node == "" {
		host, _ := os.Hostname()
		cfg.Node = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if cfg.Job == "" {
		cfg.Job = DefaultJobName(cfg.Source, opt.Sink.URL())
	}
	j := &Job{cfg: cfg, opt: opt, src: opt.Source, coord: opt.Coordinator, sink: opt.Sink,
		log: opt.Logger, now: opt.Now, wake: make(chan struct{}, 1)}
	if j.log == nil {
		j.log = slog.New(slog.DiscardHandler)
	}
	j.log = j.log.With("job", cfg.Job, "node", cfg.Node)
	if j.now == nil {
		j.now = time.Now
	}
	j.obs = newObserver(j.now)
	j.lead = &leadership{c: j.coord, node: cfg.Node, ttl: cfg.LeaseTTL, obs: j.obs}
	j.m = newMetrics(j)
	j.rd = reader{job: j}
	j.bufs = newBufPool()
	j.decoding = make(chan struct{}, max(1, min(runtime.GOMAXPROCS(0), cfg.MaxInFlight)))
	j.stat = status{state: StateStarting, started: j.now(), inflight: map[string]*flight{}, final: map[string]string{}}
	if err := j.apart(); err != nil {
		return nil, err
	}
	return j, nil
}

// Config returns the job's configuration, with the node and job names filled in.
func (j *Job) Config() Config { return j.cfg }

// Run works on the job until every split of its plan is done or quarantined, then (on the
// leader) finishes the sink. It returns nil when every split is done, ErrQuarantined naming
// each bad object when some were quarantined, ErrAlreadyComplete when the plan had finished
// before (without Options.Replan), and a fatal error (configuration, credentials, the
// coordinator, the sink) at once.
func (j *Job) Run(ctx context.Context) (err error) {
	defer func() { j.setEnd(err) }()
	if !j.coord.Durable() {
		j.log.Warn("the solo coordinator keeps progress in this process only: if it stops, running the job again reads the whole prefix again; use coordinator bucket or nats:// to resume")
	}
	if err := j.start(ctx); err != nil {
		return err
	}
	j.log.Info("plan", "plan", short(j.plan.ID), "splits", j.plan.Splits, "objects", j.plan.Objects, "bytes", j.plan.Bytes)
	j.setState(StateRunning)
	if err := j.work(ctx); err != nil {
		return err
	}
	j.setState(StateFinishing)
	return j.finish(ctx)
}

// DefaultJobName is the job name when none is given: derived from the source and the sink,
// so the same command on several machines names the same job.
func DefaultJobName(source, sink string) string {
	return "bf-" + PlanID([]string{source, sink})[:16]
}

// start finds the job's current plan, planning it when there is none (or Replan asks).
func (j *Job) start(ctx context.Context) error {
	replanned := false
	for {
		var cur Current
		_, found, err := getJSON(ctx, j.coord, keyCurrent, &cur)
		if err != nil {
			return err
		}
		if found {
			if err := j.sameJob(&cur); err != nil {
				return err
			}
			switch {
			case cur.State == JobRunning || replanned:
				return j.load(ctx, cur.Plan)
			case !j.opt.Replan:
				return finalErr(j.cfg.Job, &cur)
			}
		}
		ok, err := j.lead.try(ctx)
		if err != nil {
			return err
		}
		if ok {
			j.setState(StatePlanning)
			err := j.holding(ctx, j.planJob)
			if err != nil {
				return err
			}
			replanned = true
			continue
		}
		if err := j.sleep(ctx, j.cfg.PollInterval); err != nil {
			return err
		}
	}
}

// sameJob refuses a job name already used for another source or sink.
func (j *Job) sameJob(cur *Current) error {
	if cur.Source == j.cfg.Source && cur.Sink == j.sink.URL() {
		return nil
	}
	return errcode.E("start", "job "+j.cfg.Job, ErrJobMismatch,
		fmt.Errorf("%s holds this job reading %s into %s, not %s into %s", j.coord.Describe(), cur.Source, cur.Sink, j.cfg.Source, j.sink.URL()))
}

// finalErr is how a finished job answers a run without Replan.
func finalErr(job string, cur *Current) error {
	if cur.State == JobSucceeded {
		return errcode.E("start", "job "+job, ErrAlreadyComplete,
			fmt.Errorf("plan %s finished %s", short(cur.Plan), cur.FinishedAt.Format(time.RFC3339)))
	}
	return quarantineErr(job, cur.Quarantine, 0)
}

// holding runs fn as the leader, renewing the leadership meanwhile, and then releases it.
func (j *Job) holding(ctx context.Context, fn func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(j.cfg.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := j.lead.renew(ctx); errors.Is(err, ErrLeaseLost) {
					cancel(err)
					return
				}
			}
		}
	})
	j.setLeader(true)
	err := fn(ctx)
	cancel(nil)
	wg.Wait()
	j.setLeader(false)
	j.lead.release(context.WithoutCancel(ctx))
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, ErrLeaseLost) {
		return nil // another worker leads now and does it
	}
	return err
}

// sleep waits d, or until a split this worker runs ends.
func (j *Job) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	case <-j.wake:
	}
	return nil
}

func (j *Job) poke() {
	select {
	case j.wake <- struct{}{}:
	default:
	}
}
