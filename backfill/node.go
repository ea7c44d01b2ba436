package backfill

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/lease"
)

// holdNode holds, for as long as the job runs, the lease of this worker's node id
// (node-<id>), so that two live workers given one node id are told so: the one that does not
// hold it watches the lease record, and once it sees the record change (the holder renewed
// it: it is alive) it stops the job (stop) with ErrNodeInUse naming the id. A worker started
// again after its predecessor died finds a record that does not change, and takes the lease
// over after the lease TTL and its skew bound; it works meanwhile, as safely as any worker:
// the leases never take one node's record for another's. It returns what ends the watch
// (releasing the lease). The solo coordinator has one process: nothing to watch.
func (j *Job) holdNode(ctx context.Context, stop context.CancelCauseFunc) (end func()) {
	if !j.coord.Durable() {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { j.watchNode(ctx, stop) })
	return func() { cancel(); wg.Wait() }
}

func (j *Job) watchNode(ctx context.Context, stop context.CancelCauseFunc) {
	name := nodeLeaseName(j.cfg.Node)
	for ctx.Err() == nil {
		h, err := j.leases.Acquire(ctx, name)
		var held *lease.HeldError
		switch {
		case err == nil:
			h.Keep(ctx) // until the job ends, or the lease is lost: then look again
			if ctx.Err() != nil {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				_ = h.Release(rctx)
				cancel()
				return
			}
			j.log.Warn("this worker lost the lease of its node id; watching it again", "error", h.Err())
			continue
		case errors.As(err, &held) && held.Self && held.Live:
			j.log.Error("another live worker has this worker's node id: stopping")
			stop(errcode.E("start", "node "+j.cfg.Node, ErrNodeInUse,
				fmt.Errorf("another worker of job %s runs with node id %q: it renewed the node's lease (%s) while this worker watched it; every worker needs an id of its own, and this one stops",
					j.cfg.Job, j.cfg.Node, lease.LeaseKey(name))))
			return
		case errors.Is(err, lease.ErrHeld), ctx.Err() != nil:
		default:
			j.log.Warn("taking the lease of this worker's node id failed; trying again", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(j.cfg.PollInterval):
		}
	}
}
