package backfill

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/bytesize"
	"github.com/wharfdata/wharf/internal/sleep"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store"
)

// Options are what a Job is given besides its Config.
type Options struct {
	Coordinator *Coordinator
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
	coord *Coordinator
	sink  Sink
	log   *slog.Logger
	// leaseLog is log without the node, which the lease engine's lines name themselves.
	leaseLog *slog.Logger
	now      func() time.Time
	leases   *lease.Leaser // opened by Run
	m        *metrics
	rd       reader
	bufs     *bufPool
	// decoding holds a token for each member being decoded: at most as many as there are
	// processors, however many splits are in flight.
	decoding chan struct{}

	fleet fleetView // the job as the coordinator records it, for the status page

	plan  *Plan
	gen   int // the plan's Current.Generation
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
	j.leaseLog = j.log.With("job", cfg.Job) // the lease engine names the node itself
	j.log = j.log.With("job", cfg.Job, "node", cfg.Node)
	if j.now == nil {
		j.now = time.Now
	}
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
// before (without Options.Replan), ErrNodeInUse when another live worker has this worker's
// node id, and a fatal error (configuration, credentials, the coordinator, the sink) at once.
func (j *Job) Run(ctx context.Context) (err error) {
	defer func() { j.setEnd(err) }()
	if !j.coord.Durable() {
		j.log.Warn("the solo coordinator keeps progress in this process only: if it stops, running the job again reads the whole prefix again; use coordinator bucket or nats:// to resume")
	}
	if j.leases, err = j.coord.leaser(ctx, j.cfg.leaseConfig(), j.leaseLog); err != nil {
		return err
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	defer j.holdNode(ctx, stop)()
	err = j.run(ctx)
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, ErrNodeInUse) {
		return cause
	}
	return err
}

// run plans or loads the job's plan, works on it and finishes it; a worker whose plan was
// superseded (a replan while it read an earlier one) takes the current plan and goes on.
func (j *Job) run(ctx context.Context) error {
	if c, ok := j.sink.(claimer); ok {
		if err := c.Claim(ctx, j.cfg.Job, j.cfg.Source); err != nil {
			return err
		}
	}
	replan := j.opt.Replan
	for {
		if err := j.start(ctx, replan); err != nil {
			return err
		}
		replan = false
		j.log.Info("plan", "plan", short(j.plan.ID), "generation", j.gen, "splits", j.plan.Splits, "objects", j.plan.Objects, "bytes", j.plan.Bytes)
		j.setState(StateRunning)
		err := j.work(ctx)
		if err == nil {
			j.setState(StateFinishing)
			err = j.finish(ctx)
		}
		if !errors.Is(err, errSuperseded) {
			return err
		}
		j.log.Warn("the job was planned again while this worker read an earlier plan: it takes the current one", "plan", short(j.plan.ID))
		j.forgetPlan()
	}
}

// DefaultJobName is the job name when none is given: derived from the source and the sink,
// so the same command on several machines names the same job.
func DefaultJobName(source, sink string) string {
	return "bf-" + PlanID([]string{source, sink})[:16]
}

// start finds the job's one plan: the plan the leader lease's record holds, or, when it
// holds none (or the plan ended and replan asks for another), the plan this worker makes as
// the leader. The worker that wins the leader lease reads the plan in the same step (the
// acquisition's read of the record it replaces), so it never makes a second one.
func (j *Job) start(ctx context.Context, replan bool) error {
	for {
		cur, err := j.current(ctx)
		if err != nil {
			return err
		}
		if done, err := j.adopt(ctx, cur, replan); done || err != nil {
			return err
		}
		h, err := j.leases.Acquire(ctx, leaderLease)
		if errors.Is(err, lease.ErrHeld) {
			if err := j.sleep(ctx, j.cfg.PollInterval); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		cur, made, err := j.planAsLeader(ctx, h, replan)
		switch {
		case errors.Is(err, ErrLeaseLost):
			j.log.Warn("the leader lease was lost while planning: reading the plan again", "error", err)
			continue
		case err != nil:
			return err
		case made:
			return j.load(ctx, cur)
		}
		if done, err := j.adopt(ctx, cur, false); done || err != nil {
			return err
		}
	}
}

// adopt loads cur's plan when it runs, or answers a plan that ended (unless replan asks for
// another); done is false when there is no plan to adopt.
func (j *Job) adopt(ctx context.Context, cur *Current, replan bool) (done bool, err error) {
	if cur == nil || brokenPlan {
		return false, nil
	}
	if err := j.sameJob(cur); err != nil {
		return true, err
	}
	switch {
	case cur.State == JobRunning:
		return true, j.load(ctx, cur)
	case !replan:
		return true, finalErr(j.cfg.Job, cur)
	}
	return false, nil
}

// planAsLeader plans the job holding the leader lease h, unless the record h replaced holds a
// plan that runs (or ended, and replan does not ask for another): then it releases h and
// returns that plan. Otherwise it lists the prefix, publishes the plan and makes it current
// in the record itself, releasing the lease in the same fenced write, and returns it with
// made set: a leader that lost the lease meanwhile (ErrLeaseLost) has made nothing current.
func (j *Job) planAsLeader(ctx context.Context, h *lease.Lease, replan bool) (_ *Current, made bool, err error) {
	defer func() { _ = h.Release(context.WithoutCancel(ctx)) }()
	cur, err := currentOf(h.State())
	if err != nil {
		return nil, false, coordErr(j.coord, "decode", lease.LeaseKey(leaderLease), err)
	}
	if cur != nil && !brokenPlan {
		if err := j.sameJob(cur); err != nil || cur.State == JobRunning || !replan {
			return cur, false, err
		}
	}
	j.setLeader(true)
	defer j.setLeader(false)
	j.setState(StatePlanning)
	var next *Current
	err = holding(ctx, h, "the leader lease", func(ctx context.Context) error {
		p, err := j.planJob(ctx, cur)
		if err != nil {
			return err
		}
		next = &Current{Plan: p.ID, Generation: generation(cur) + 1, Source: j.cfg.Source, Sink: j.sink.URL(),
			Reading: j.reading(), State: JobRunning, PlannedAt: p.PlannedAt}
		return leaseLost("publish", "plan "+short(p.ID), h.ReleaseWith(ctx, next))
	})
	return next, err == nil, err
}

// generation is cur's plan generation; 0 when there is no plan.
func generation(cur *Current) int {
	if cur == nil {
		return 0
	}
	return cur.Generation
}

// sameJob refuses a job name already used for another source or sink, or for the same ones
// read another way (compression, max_record_bytes): a worker started with other settings
// must not deliver the rest of a job, nor a replan read its quarantined objects again, in a
// reading the job's other records were not made with.
func (j *Job) sameJob(cur *Current) error {
	if cur.Source != j.cfg.Source || cur.Sink != j.sink.URL() {
		return errcode.E("start", "job "+j.cfg.Job, ErrJobMismatch,
			fmt.Errorf("%s holds this job reading %s into %s, not %s into %s", j.coord.Describe(), cur.Source, cur.Sink, j.cfg.Source, j.sink.URL()))
	}
	if r := j.reading(); cur.Reading != nil && *cur.Reading != *r {
		var diff []string
		if cur.Reading.Compression != r.Compression {
			diff = append(diff, fmt.Sprintf("compression %s (this worker: %s)", cur.Reading.Compression, r.Compression))
		}
		if cur.Reading.MaxRecordBytes != r.MaxRecordBytes {
			diff = append(diff, fmt.Sprintf("max_record_bytes %s (this worker: %s)", bytesize.Format(cur.Reading.MaxRecordBytes), bytesize.Format(r.MaxRecordBytes)))
		}
		return errcode.E("start", "job "+j.cfg.Job, ErrJobMismatch,
			fmt.Errorf("the job reads its objects with %s: run this worker with the job's settings, or give the backfill another --job", strings.Join(diff, ", ")))
	}
	return nil
}

// reading is how this worker reads objects into records.
func (j *Job) reading() *Reading {
	return &Reading{Compression: j.cfg.Compression, MaxRecordBytes: j.cfg.MaxRecordBytes}
}

// finalErr is how a finished job answers a run without Replan.
func finalErr(job string, cur *Current) error {
	if cur.State == JobSucceeded {
		return errcode.E("start", "job "+job, ErrAlreadyComplete,
			fmt.Errorf("plan %s finished %s", short(cur.Plan), cur.FinishedAt.Format(time.RFC3339)))
	}
	return quarantineErr(job, cur.Quarantine, 0)
}

// sleep waits d, or until a split this worker runs ends.
func (j *Job) sleep(ctx context.Context, d time.Duration) error { return sleep.Or(ctx, d, j.wake) }

func (j *Job) poke() {
	select {
	case j.wake <- struct{}{}:
	default:
	}
}
