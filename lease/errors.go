package lease

import (
	"fmt"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store/probe"
)

const section = "Leases and the commit log"

// The kinds of lease failures, each an *errcode.Code: test for them with errors.Is.
var (
	// ErrHeld: another node holds the lease and this machine does not judge it expired.
	ErrHeld = errcode.New(errcode.Def{Name: "WHARF_LEASE_HELD", Text: "lease held by another node",
		Exit: errcode.ExitHeld, Class: errcode.Transient, Standing: true, Section: section,
		Meaning: "The lease is held by another node (or, for a machine lease, another process on this machine), and this machine has not seen it unchanged for its TTL plus the skew bound. The message names the holder and the time until which this machine will not take it over. Nothing was written: the run was skipped.",
		Remedy:  "Nothing is wrong: another run holds it. A scheduler should treat exit 75 as \"skipped, try at the next tick\". To take over a lease whose holder died, give `--wait` (or `lease.wait`) of at least TTL + 30 s, or free it with `wharf lease release NAME --node HOLDER`."})
	// ErrFenced: a commit or save lost its condition to a higher fence (a later acquisition
	// took the lease over), or came after the holder's deadline.
	ErrFenced = errcode.New(errcode.Def{Name: "WHARF_LEASE_FENCED", Text: "fenced: a later holder took the lease over",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Standing: true, Section: section,
		Meaning: "A commit (or a save) lost its condition to a higher fence: a later acquisition took the lease over (this holder was paused, partitioned or slow past its TTL), or the holder's own deadline (TTL less the skew bound after its last successful renewal) had passed. What this holder wrote after that is not readable: readers follow the lease record, and the record never named it.",
		Remedy:  "Nothing to repair. The run that holds the lease now carries on; run again later (with `--resume` for an export) if it is still needed."})
	// ErrNotHeld: renew or release by a node that does not hold the lease, or whose hold a
	// later acquisition fenced past, or past the holder's deadline. The record is left
	// untouched.
	ErrNotHeld = errcode.New(errcode.Def{Name: "WHARF_LEASE_NOT_HELD", Text: "lease not held by this node",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Standing: true, Section: section,
		Meaning: "A renew or release came from a node that does not hold the lease, or from a holder that a later acquisition fenced past, or from one whose deadline passed (no renewal succeeded within its TTL less the skew bound: its own timer stopped it, whatever a request in flight was doing). The lease record was left untouched; `wharf lease run` stops its command.",
		Remedy:  "Check `wharf lease show NAME`: the holder and fence it names are the current ones."})
	// ErrNodeIDLocal: a bucket lease under the node id "local".
	ErrNodeIDLocal = errcode.New(errcode.Def{Name: "WHARF_LEASE_NODE_ID_LOCAL", Text: "a bucket lease needs a node id other than local",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Standing: true, Section: section,
		Meaning: "A lease in a bucket was asked for under the node id `local`, the default, which every machine has: two machines could not be told apart.",
		Remedy:  "Set `WHARF_NODE_ID` (or `--node`, or `lease.node` in the config) to a name unique to this machine or pod."})
	// ErrCursorKindMismatch: a log entry of the wrong kind for its log.
	ErrCursorKindMismatch = errcode.New(errcode.Def{Name: "WHARF_LEASE_CURSOR_KIND_MISMATCH", Text: "commit log entry of the wrong kind",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Standing: true, Section: section,
		Meaning: "A commit log holds entries of one kind (an export's journal is `export`); an entry of another kind was committed to it or read from it. Two jobs use one lease name.",
		Remedy:  "Give the job its own lease name; `wharf lease log NAME` shows the kind of each entry."})
	// ErrCoordinationUnproven is the probe's: leases need a store proven cas.
	ErrCoordinationUnproven = probe.ErrCoordinationUnproven
)

// HeldError is an ErrHeld failure: who holds the lease, and until when this machine will not
// take it over.
type HeldError struct {
	Name   string
	Holder string // the node id in the lease record, or "another process on this machine"
	Fence  int64
	// Until is this machine's wall-clock time at which it would first judge the lease
	// expired, had it kept watching; zero for a machine lease.
	Until time.Time
	// Self is set when the holder's node id is this node's own.
	Self bool
	// Live is set when the record had another version at this Leaser's previous look at it
	// (an earlier acquisition of the name, or a look during this one's wait): someone wrote
	// it since, so its holder is not one that died — it renewed, or another took it over. A
	// holder that died leaves its record as it was.
	Live bool
}

func (e *HeldError) Error() string {
	if e.Until.IsZero() {
		return fmt.Sprintf("skipped: lease %q held by %s", e.Name, e.Holder)
	}
	s := fmt.Sprintf("skipped: lease %q held by node %s (fence %d) until %s as this machine judges it",
		e.Name, e.Holder, e.Fence, e.Until.UTC().Format(time.RFC3339))
	if e.Self {
		s += " (this node's own id: an earlier process of this node that did not release it, or another process given the same id)"
	}
	return s
}

// Unwrap returns ErrHeld.
func (e *HeldError) Unwrap() error { return ErrHeld }

// fail returns an error of kind for op on the lease name.
func fail(op, name string, kind *errcode.Code, format string, a ...any) error {
	var cause error
	if format != "" {
		cause = fmt.Errorf(format, a...)
	}
	what := ""
	if name != "" {
		what = fmt.Sprintf("lease %q", name)
	}
	return errcode.E(op, what, kind, cause)
}
