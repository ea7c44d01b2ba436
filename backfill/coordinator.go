package backfill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store"
)

// Coordinator is where a job keeps its records and holds its leases: a compare-and-set store
// (package cas) of the job's own, and the one lease engine (package lease) over it. What a
// fleet agrees on is either a record written once (a plan's header and pages, a split's
// descriptor: create-if-absent, the same bytes from whoever writes them) or the state of a
// lease, written only by its holder's fenced writes:
//
//	plans/<plan>.json, plans/<plan>/<page>.json   the plan: its header, its split ids
//	splits/<split>.json                           a split's descriptor
//	_wharf/leases/leader.json                     the leader lease; its state is Current
//	_wharf/leases/split-<split>.json              a split's lease; its state is SplitState
//	_wharf/leases/node-<node>.json                held by the one worker of each node id
//
// Three coordinators: solo (NewSolo, a cas.Memory in this process), the bucket (NewBucket:
// objects below BucketPrefix(job), leases by lease.Open behind the probe) and any cas.Store
// that enforces its conditions by its protocol (NewCAS: NATS JetStream key-value, cas/natskv,
// in the bucket NATSBucket(job)).
type Coordinator struct {
	kv      cas.Store
	s       *store.Store // the bucket coordinator's store at the job's prefix
	opts    lease.Options
	durable bool
	closers []func() error
}

// BucketPrefix is where the bucket coordinator keeps a job, at the root of its store.
func BucketPrefix(job string) string { return "_wharf/backfill/" + job + "/" }

// NATSBucket is the NATS key-value bucket of a job.
func NATSBucket(job string) string { return "wharf-backfill-" + job }

// NewSolo returns the in-process coordinator: correct for one process, but its records die
// with it, so a restart replays the prefix.
func NewSolo() *Coordinator { return &Coordinator{kv: cas.NewMemory()} }

// NewBucket returns the coordinator of the job whose records are objects below s (a store
// opened at BucketPrefix(job)): each record the object at its key, a create a put under
// If-None-Match, an update a put under If-Match on its ETag (cas.Bucket). Its leases are
// taken by lease.Open, which refuses a store the probe did not prove cas
// (ErrCoordinationUnproven); opts may carry the probe's result or remembered verdicts (nil:
// the store is probed when the job starts).
func NewBucket(s *store.Store, opts *lease.Options) *Coordinator {
	c := &Coordinator{kv: cas.NewBucket(s), s: s, durable: true}
	if opts != nil {
		c.opts = *opts
	}
	return c
}

// NewCAS returns the coordinator whose records are in kv, a store that enforces its
// conditions by its protocol (NATS JetStream key-value): durable, its leases taken by
// lease.OpenCAS.
func NewCAS(kv cas.Store) *Coordinator { return &Coordinator{kv: kv, durable: true} }

// OnClose adds f to what Close runs (a connection, a store the coordinator was opened on).
func (c *Coordinator) OnClose(f func() error) *Coordinator {
	c.closers = append(c.closers, f)
	return c
}

// Records is the compare-and-set store of the job's records.
func (c *Coordinator) Records() cas.Store { return c.kv }

// Store is the bucket coordinator's store (at the job's prefix); nil for the others.
func (c *Coordinator) Store() *store.Store { return c.s }

// Durable reports whether the records outlive this process (false for solo).
func (c *Coordinator) Durable() bool { return c.durable }

// Describe names the coordinator and the job's place in it, without any secret.
func (c *Coordinator) Describe() string {
	if !c.durable {
		return "solo (in-process)"
	}
	return c.kv.Describe()
}

// Close runs what OnClose added, last first.
func (c *Coordinator) Close() error {
	var errs []error
	for i := len(c.closers) - 1; i >= 0; i-- {
		errs = append(errs, c.closers[i]())
	}
	return errors.Join(errs...)
}

// leaser opens the job's leases with cfg: lease.Open over the bucket coordinator's store (the
// probe's gate), lease.OpenCAS over any other. Every coordinator's records are fresh: no
// wharf kept leases of record format 1 in them.
func (c *Coordinator) leaser(ctx context.Context, cfg lease.Config, log *slog.Logger) (*lease.Leaser, error) {
	o := c.opts
	o.Logger, o.Fresh = log, true
	if c.s != nil {
		l, err := lease.Open(ctx, c.s, cfg, &o)
		if err != nil {
			return nil, fmt.Errorf("the bucket coordinator needs a store proven cas (or use --coordinator nats://… or solo): %w", err)
		}
		return l, nil
	}
	return lease.OpenCAS(c.kv, cfg, &o)
}

// coordErr wraps a failure of the coordinator, naming it and the record.
func coordErr(c *Coordinator, op, key string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errcode.Of(err) != nil {
		return fmt.Errorf("%s %s record %q: %w", c.Describe(), op, key, err)
	}
	return errcode.E(op, fmt.Sprintf("%s record %q", c.Describe(), key), ErrCoordinator, err)
}

// getJSON reads key into v; found is false (and err nil) when there is no record.
func getJSON(ctx context.Context, c *Coordinator, key string, v any) (found bool, err error) {
	b, _, err := c.kv.Get(ctx, key)
	if errors.Is(err, cas.ErrNoRecord) {
		return false, nil
	}
	if err != nil {
		return false, coordErr(c, "get", key, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, coordErr(c, "decode", key, fmt.Errorf("not a backfill record: %w", err))
	}
	return true, nil
}

// createOnce creates key holding v; a record already there is left as it is: the records a
// plan creates are the same bytes whoever writes them (the same plan, written by another
// leader or an earlier run).
func createOnce(ctx context.Context, c *Coordinator, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = c.kv.Create(ctx, key, b)
	if errors.Is(err, cas.ErrConflict) {
		return nil
	}
	return coordErr(c, "write", key, err)
}

// Record keys.
func keySplit(id string) string { return "splits/" + id + ".json" }
func keyPlan(id string) string  { return "plans/" + id + ".json" }
func keyPage(id string, page int) string {
	return fmt.Sprintf("plans/%s/%06d.json", id, page)
}

// readLease reads the lease record of name as any reader may, without a lease (as Log.Lease
// does, in one request: the job's records are fresh).
func readLease(ctx context.Context, c *Coordinator, name string) (rec lease.Record, found bool, err error) {
	key := lease.LeaseKey(name)
	found, err = getJSON(ctx, c, key, &rec)
	if err == nil && found && rec.TTLMillis <= 0 {
		err = coordErr(c, "decode", key, errors.New("not a wharf lease record"))
	}
	return rec, found, err
}
