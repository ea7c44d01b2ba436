package backfill

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/wharfdata/wharf/errcode"
)

// The states of a split.
const (
	StatusPending     = "pending"     // not yet read, or handed back after a failure
	StatusLeased      = "leased"      // a worker holds it
	StatusDone        = "done"        // every record delivered and committed
	StatusQuarantined = "quarantined" // done but for its quarantined objects (each failed max_attempts times)
)

// The states of a job (Current.State).
const (
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
)

// Watermark is how far a split's records have been delivered and acknowledged: every record
// before record Record of member Member. Offset is the member's decompressed bytes those
// records take (a resumed read checks it: drift), ETag that member's pin, Records the split's
// records delivered in all.
type Watermark struct {
	Member  int    `json:"member"`
	Record  int64  `json:"record"`
	Offset  int64  `json:"offset"`
	ETag    string `json:"etag,omitempty"`
	Records int64  `json:"records"`
}

// Failure is one failed attempt of a split: the object and the reason.
type Failure struct {
	Attempt int       `json:"attempt"`
	Node    string    `json:"node"`
	Key     string    `json:"key"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Time    time.Time `json:"time"`
}

// PartInfo is what a store sink wrote for a split.
type PartInfo struct {
	Key     string `json:"key"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
	ETag    string `json:"etag"`
	Records int64  `json:"records"`
}

// SplitState is a split's record in the coordinator.
type SplitState struct {
	Status    string    `json:"status"`
	Owner     string    `json:"owner,omitempty"`
	Fence     uint64    `json:"fence"`    // raised by every lease of the split
	Attempts  int       `json:"attempts"` // attempts a bad object failed
	Watermark Watermark `json:"watermark"`
	Beat      uint64    `json:"beat"` // raised by every renewal
	Failures  []Failure `json:"failures,omitempty"`
	// Bad are the members that failed an attempt, each with its own count: one that failed
	// max_attempts times is quarantined, and the split's later attempts leave it out.
	Bad      []BadObject `json:"bad,omitempty"`
	Part     *PartInfo   `json:"part,omitempty"`
	Updated  time.Time   `json:"updated"`
	Finished time.Time   `json:"finished,omitzero"`
}

// BadObject is a member of a split that failed it: how often, and the last reason.
type BadObject struct {
	Member      int    `json:"member"` // its ordinal in the split
	Key         string `json:"key"`
	Attempts    int    `json:"attempts"`
	Reason      string `json:"reason"`
	Message     string `json:"message"`
	Quarantined bool   `json:"quarantined,omitempty"`
}

// final reports whether the split needs no more work.
func (s *SplitState) final() bool { return s.Status == StatusDone || s.Status == StatusQuarantined }

// quarantined returns the ordinals of the split's quarantined members, in order.
func (s *SplitState) quarantined() []int {
	var out []int
	for _, b := range s.Bad {
		if b.Quarantined {
			out = append(out, b.Member)
		}
	}
	slices.Sort(out)
	return out
}

// quarantinedObjects returns the split's quarantined members.
func (s *SplitState) quarantinedObjects() []BadObject {
	var out []BadObject
	for _, b := range s.Bad {
		if b.Quarantined {
			out = append(out, b)
		}
	}
	return out
}

// maxFailures bounds the failures a split's record keeps (the latest ones).
const maxFailures = 20

// Current is the job's record of its current plan and how the job ended.
type Current struct {
	Plan       string       `json:"plan"`
	Source     string       `json:"source"`
	Sink       string       `json:"sink"`
	State      string       `json:"state"`
	PlannedAt  time.Time    `json:"planned_at"`
	FinishedAt time.Time    `json:"finished_at,omitzero"`
	Error      string       `json:"error,omitempty"`
	Quarantine []Quarantine `json:"quarantine,omitempty"`
}

// Quarantine names a split that ended with quarantined objects (its other members were
// delivered): Objects are those objects, Failures the split's failed attempts (the latest).
type Quarantine struct {
	Split    string      `json:"split"`
	Objects  []BadObject `json:"objects"`
	Failures []Failure   `json:"failures"`
}

// leaderRec is the leader's lease record.
type leaderRec struct {
	Node     string    `json:"node"`
	Fence    uint64    `json:"fence"`
	Beat     uint64    `json:"beat"`
	Released bool      `json:"released"`
	Nonce    string    `json:"nonce"` // tells two writers' records apart
	Updated  time.Time `json:"updated"`
}

// observer judges expiry on this machine's monotonic clock only: a record whose revision
// stayed the same for the lease TTL since this process first saw it is stale, whatever the
// clocks of other machines say.
type observer struct {
	mu   sync.Mutex
	seen map[string]observed
	now  func() time.Time
}

type observed struct {
	rev   string
	since time.Time
}

func newObserver(now func() time.Time) *observer {
	return &observer{seen: map[string]observed{}, now: now}
}

// stale records that key is at rev now and reports whether it has been for ttl.
func (o *observer) stale(key, rev string, ttl time.Duration) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	ob, ok := o.seen[key]
	if !ok || ob.rev != rev {
		o.seen[key] = observed{rev: rev, since: now}
		return false
	}
	return now.Sub(ob.since) >= ttl
}

func (o *observer) forget(key string) {
	o.mu.Lock()
	delete(o.seen, key)
	o.mu.Unlock()
}

// leadership is this worker's claim on the job's leader lease.
type leadership struct {
	c    Coordinator
	node string
	ttl  time.Duration
	obs  *observer

	mu  sync.Mutex
	rev string
	rec leaderRec
	// renewed is when the lease was last written, on the local clock; the leader acts only
	// within ttl of it.
	renewed time.Time
}

// try makes this worker the leader if the lease is free, released or stale; it reports
// whether this worker now leads.
func (l *leadership) try(ctx context.Context) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rev != "" {
		return true, nil
	}
	var cur leaderRec
	rev, found, err := getJSON(ctx, l.c, keyLeader, &cur)
	if err != nil {
		return false, err
	}
	if found && !cur.Released && cur.Node != l.node && !l.obs.stale(keyLeader, rev, l.ttl) {
		return false, nil
	}
	rec := leaderRec{Node: l.node, Fence: cur.Fence + 1, Nonce: nonce(), Updated: l.obs.now().UTC()}
	newRev, err := putJSON(ctx, l.c, keyLeader, rec, rev)
	if errors.Is(err, ErrConflict) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	l.rev, l.rec, l.renewed = newRev, rec, l.obs.now()
	return true, nil
}

// renew writes the lease again; a conflict means another worker took it over.
func (l *leadership) renew(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rev == "" {
		return nil
	}
	rec := l.rec
	rec.Beat++
	rec.Updated = l.obs.now().UTC()
	rev, err := putJSON(ctx, l.c, keyLeader, rec, l.rev)
	if errors.Is(err, ErrConflict) {
		l.rev = ""
		return errcode.E("renew", "the leadership", ErrLeaseLost, err)
	}
	if err != nil {
		return err
	}
	l.rev, l.rec, l.renewed = rev, rec, l.obs.now()
	return nil
}

// release marks the lease released, so another worker may lead at once.
func (l *leadership) release(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rev == "" {
		return
	}
	rec := l.rec
	rec.Released = true
	_, _ = putJSON(ctx, l.c, keyLeader, rec, l.rev)
	l.rev = ""
}

func nonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
