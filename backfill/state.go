package backfill

import (
	"slices"
	"time"
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

// SplitState is a split's state: what its lease (split-<id>) holds, saved by its holder's
// fenced writes (Lease.Save at each commit, Lease.ReleaseWith when it is done or handed
// back), and found by the next holder in the record it takes over. Owner and Fence are the
// lease record's own (who holds it now, under which fence), not saved.
type SplitState struct {
	Status string `json:"status"`
	Owner  string `json:"-"`
	Fence  int64  `json:"-"`
	// Generation is that of the plan whose worker wrote the state last (Current.Generation):
	// a worker of an earlier plan takes no split a later plan wrote.
	Generation int       `json:"generation,omitempty"`
	Attempts   int       `json:"attempts"` // attempts a bad object failed
	Watermark  Watermark `json:"watermark"`
	Failures   []Failure `json:"failures,omitempty"`
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

// Current is the job's one plan and how the job ended: the state of the leader lease, so
// that only the holder of the leader lease writes it, by a fenced write, and a worker that
// acquires the leader lease reads it in the same step. A job has one plan for its life;
// Options.Replan makes another only once the plan has ended (Generation counts them).
type Current struct {
	Plan       string       `json:"plan"`
	Generation int          `json:"generation"` // 1 for the job's first plan, one more for each replan
	Source     string       `json:"source"`
	Sink       string       `json:"sink"`
	Reading    *Reading     `json:"reading,omitempty"` // nil in a job planned before wharf recorded it
	State      string       `json:"state"`
	PlannedAt  time.Time    `json:"planned_at"`
	FinishedAt time.Time    `json:"finished_at,omitzero"`
	Error      string       `json:"error,omitempty"`
	Quarantine []Quarantine `json:"quarantine,omitempty"`
}

// Reading is what decides the records a job's objects become, besides the objects
// themselves: every worker of a job must read them alike, or its output mixes two readings
// (one worker's decoded records beside another's raw gzip bytes).
type Reading struct {
	Compression    string `json:"compression"`
	MaxRecordBytes int64  `json:"max_record_bytes"`
}

// Quarantine names a split that ended with quarantined objects (its other members were
// delivered): Objects are those objects, Failures the split's failed attempts (the latest).
type Quarantine struct {
	Split    string      `json:"split"`
	Objects  []BadObject `json:"objects"`
	Failures []Failure   `json:"failures"`
}
