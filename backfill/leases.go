package backfill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/lease"
)

// The job's leases, all in one lease.Leaser over its coordinator.
const leaderLease = "leader"

// splitLease is the name of split id's lease.
func splitLeaseName(id string) string { return "split-" + id }

// nodeLeaseName is the name of the lease held by the worker of node id node (hashed when the
// id is too long for a lease name).
func nodeLeaseName(node string) string {
	if len(node) <= 100 {
		return "node-" + node
	}
	sum := sha256.Sum256([]byte(node))
	return "node-" + hex.EncodeToString(sum[:16])
}

// LeaseSkew is the skew bound of a job's leases: LeaseTTL/5. A holder stops committing
// LeaseTTL − LeaseSkew after its last successful write, and another worker takes a lease
// over only once it has seen it unchanged for LeaseTTL + LeaseSkew on its own clock.
func (c *Config) LeaseSkew() time.Duration { return c.LeaseTTL / 5 }

// leaseConfig is the config of the job's leases: lease_ttl, its skew bound, a renewal every
// TTL/3 (after the holder's last write), the node id, and leases that need a store proven cas.
func (c *Config) leaseConfig() lease.Config {
	lc := lease.DefaultConfig()
	lc.TTL, lc.Skew, lc.RenewEvery, lc.Node = c.LeaseTTL, c.LeaseSkew(), c.LeaseTTL/3, c.Node
	lc.Coordination = lease.CoordinationCAS
	return lc
}

// errSuperseded: the job was planned again (a replan) while this worker read an earlier plan.
var errSuperseded = errors.New("the job has a later plan")

// errFinal: a split that is done or quarantined (no lease is taken on it).
var errFinal = errors.New("the split is final")

// currentOf decodes the leader lease's state: nil when there is none yet (no plan).
func currentOf(raw json.RawMessage) (*Current, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var cur Current
	if err := json.Unmarshal(raw, &cur); err != nil || cur.Plan == "" {
		return nil, fmt.Errorf("the leader lease holds %.80s, not a backfill's current plan: %v", raw, err)
	}
	return &cur, nil
}

// current reads the job's current plan from the leader lease's record, without taking it;
// nil when the job has none.
func (j *Job) current(ctx context.Context) (*Current, error) {
	return readCurrent(ctx, j.coord)
}

func readCurrent(ctx context.Context, c *Coordinator) (*Current, error) {
	rec, found, err := readLease(ctx, c, leaderLease)
	if err != nil || !found {
		return nil, err
	}
	cur, err := currentOf(rec.State)
	if err != nil {
		return nil, coordErr(c, "decode", lease.LeaseKey(leaderLease), err)
	}
	return cur, nil
}

// splitStateOf is a split's state as its lease record holds it: done or quarantined as saved,
// else leased while the lease is held (by Owner under Fence) and pending when it is not.
func splitStateOf(rec lease.Record, found bool) (SplitState, error) {
	var st SplitState
	if len(rec.State) > 0 {
		if err := json.Unmarshal(rec.State, &st); err != nil {
			return st, fmt.Errorf("not a backfill split's state: %w", err)
		}
	}
	if !st.final() {
		st.Status = StatusPending
		if found && !rec.Released {
			st.Status, st.Owner, st.Fence = StatusLeased, rec.Holder, rec.Fence
			if rec.RenewedAt.After(st.Updated) {
				st.Updated = rec.RenewedAt.UTC() // the holder's last write, by its clock
			}
		}
	}
	return st, nil
}

// readSplit reads split id's state from its lease record.
func readSplit(ctx context.Context, c *Coordinator, id string) (SplitState, error) {
	rec, found, err := readLease(ctx, c, splitLeaseName(id))
	if err != nil {
		return SplitState{}, err
	}
	st, err := splitStateOf(rec, found)
	if err != nil {
		return st, coordErr(c, "decode", lease.LeaseKey(splitLeaseName(id)), err)
	}
	return st, nil
}

// leaseLost makes a failed write of a lease's holder ErrLeaseLost when the lease was lost
// (taken over, or past its holder's deadline); other failures are returned as they are.
func leaseLost(op, what string, err error) error {
	if errors.Is(err, lease.ErrFenced) || errors.Is(err, lease.ErrNotHeld) {
		return errcode.E(op, what, ErrLeaseLost, err)
	}
	return err
}

// holding runs fn holding the lease h: renewed meanwhile (Keep), and fn's context ends,
// with ErrLeaseLost as its cause, once the lease is lost (taken over, or its holder's
// deadline passed: the lease's own timer, whatever a request in flight is doing).
func holding(ctx context.Context, h *lease.Lease, what string, fn func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go h.Keep(ctx)
	go func() {
		select {
		case <-h.Lost():
			if err := h.Err(); err != nil {
				cancel(leaseLost("hold", what, err))
			}
		case <-ctx.Done():
		}
	}()
	err := fn(ctx)
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, ErrLeaseLost) {
		return cause
	}
	return err
}
