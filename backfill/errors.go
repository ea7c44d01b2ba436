package backfill

import (
	"errors"
	"fmt"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

const section = "Backfill"

// The kinds of backfill failures, each an *errcode.Code found with errors.Is.
var (
	// ErrConfig: the job's options are invalid; the message names the key.
	ErrConfig = errcode.New(errcode.Def{Name: "WHARF_BACKFILL_CONFIG_INVALID", Text: "invalid backfill options",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Standing: true, Section: section,
		Meaning: "A key of the `backfill:` section or a flag of `wharf backfill` is invalid (a missing source, a size out of range…), or a destination or `coordinator_store` lies where a listing of the source reads (their key prefixes overlap byte for byte, either way, on one store: the job would read its own output as input). The message names the key.",
		Remedy:  "Fix the key the message names; see docs/backfill.md for every key."})
	// ErrJobMismatch: the job name is already used by a job over another source or sink, or
	// one that reads its objects another way.
	ErrJobMismatch = errcode.New(errcode.Def{Name: "WHARF_BACKFILL_JOB_MISMATCH", Text: "job name used by another backfill",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Standing: true, Section: section,
		Meaning: "The coordinator already holds a job of this name whose plan reads another source prefix or writes another destination, or reads its objects another way (`compression`, `max_record_bytes`: a worker started with other settings would deliver the rest of the job in another reading); or the destination holds the manifest of another dataset (a backfill of another source, or an export), whose certificate this job would replace. The message names what differs. Nothing was read or written.",
		Remedy:  "Give this backfill its own `--job` name, or run it with the source, destination and settings the job was planned with; give a job whose destination holds another dataset a `--to` of its own."})
	// ErrAlreadyComplete: the job's current plan finished successfully.
	ErrAlreadyComplete = errcode.New(errcode.Def{Name: "WHARF_BACKFILL_ALREADY_COMPLETE", Text: "backfill already complete",
		Exit: errcode.ExitComplete, Class: errcode.Outcome, Standing: true, Section: section,
		Meaning: "Every split of the job's plan is done: there is nothing to read.",
		Remedy:  "Nothing to do. Give `--replan` to list the prefix again (objects added or overwritten since become new splits; done splits stay done)."})
	// ErrQuarantined: the job ended with quarantined objects; the message names each object
	// and reason.
	ErrQuarantined = errcode.New(errcode.Def{Name: "WHARF_BACKFILL_QUARANTINED", Text: "objects quarantined",
		Exit: errcode.ExitFailed, Class: errcode.Outcome, Standing: true, Section: section,
		Meaning: "The job ended, but some objects were quarantined after failing `max_attempts` times: their records were not all delivered. Every other object of their splits was delivered. The message names each bad object and why (deleted, overwritten, corrupt, unreadable); `wharf backfill status` lists them all. With a store sink the manifest records a failed run and `_SUCCESS` is not written.",
		Remedy:  "Repair or restore the objects named, then run the job again with `--replan`: unchanged good splits stay done, and a replaced object is read as a new split."})
	// ErrObject: reading one member of a split failed; Reason says why (the split is handed
	// back and retried, not the job failed).
	ErrObject = errcode.New(errcode.Def{Name: "WHARF_BACKFILL_OBJECT_FAILED", Text: "object failed",
		Exit: errcode.ExitFailed, Class: errcode.Poison, Standing: true, Section: section,
		Meaning: "One object of a split could not be read as records: deleted after planning, overwritten (its ETag pin failed), corrupt (bad gzip or zstd, a record over `max_record_bytes`), or unreadable past the retry budget. The split is handed back and retried; after `max_attempts` failures the object is quarantined and its split goes on without it. It appears in logs, `/status` and `wharf_backfill_objects_failed_total{reason}`.",
		Remedy:  "See WHARF_BACKFILL_QUARANTINED."})
	// ErrLeaseLost: another worker took over a split (or the leadership) this one held.
	ErrLeaseLost = errcode.New(errcode.Def{Name: "WHARF_BACKFILL_LEASE_LOST", Text: "split lease lost",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: section,
		Meaning: "A commit found that another worker had taken over the split (this worker stalled longer than `lease_ttl`). The records since the last commit are delivered again by the new holder. Returned by the Go API's Commit; the command itself carries on with other splits.",
		Remedy:  "Nothing is lost. If it happens often, raise `lease_ttl` or lower the load on the workers."})
	// ErrNodeInUse: another live worker of the job has this worker's node id.
	ErrNodeInUse = errcode.New(errcode.Def{Name: "WHARF_BACKFILL_NODE_ID_IN_USE", Text: "another worker has this node id",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Standing: true, Section: section,
		Meaning: "Another live worker of the job runs under this worker's node id (`--node`, `node:`, `WHARF_NODE_ID`): it renewed the lease of that id (`_wharf/leases/node-<id>.json` among the job's records) while this worker watched it. Of two workers given one id, the one that does not hold that lease stops, handing back every split it held; the other goes on. Nothing is lost or doubled either way. A worker started again after its predecessor died is not stopped: it takes the id's lease over once it has seen it unchanged for `lease_ttl` and its skew bound.",
		Remedy:  "Give every worker a node id of its own: `WHARF_NODE_ID` unique to each machine or pod, one per process when several run on one machine."})
	// ErrCoordinator: the coordinator failed or could not be reached past its retries.
	ErrCoordinator = errcode.New(errcode.Def{Name: "WHARF_BACKFILL_COORDINATOR_FAILED", Text: "coordinator failed",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: section,
		Meaning: "The coordinator (the bucket, NATS JetStream or the in-process one) could not be reached past its retries, refused access, or holds a record wharf cannot read. The message names the coordinator and the record.",
		Remedy:  "Check the coordinator's address and credentials (for NATS, that JetStream is enabled); run the same command again: it resumes from the committed watermarks."})
	// ErrSink: the sink refused the records (standard output closed, the destination store
	// failing past its retries).
	ErrSink = errcode.New(errcode.Def{Name: "WHARF_BACKFILL_SINK_FAILED", Text: "sink failed",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: section,
		Meaning: "The sink did not take the records: the reader of standard output closed it (a record counts as delivered only once the reader took it), or the destination store failed past its retry policy. Nothing after the last commit counts as delivered: those records are delivered again when the job runs again.",
		Remedy:  "Fix the destination (or what reads standard output) and run the same command again."})
	// ErrListen: the address of Config.Listen cannot be served.
	ErrListen = errcode.New(errcode.Def{Name: "WHARF_BACKFILL_LISTEN_FAILED", Text: "cannot serve /metrics, /status and /healthz on the listen address",
		Exit: errcode.ExitFailed, Class: errcode.Operator, Standing: true, Section: section,
		Meaning: "The address given by `listen` (`--listen`) cannot be bound: another process listens on that port, the address is not one of this machine's, or the port is below 1024 and the process may not bind it. The message names the address and the system's answer. Nothing was read.",
		Remedy:  "Give another address (`--listen 127.0.0.1:9466`), or `off` for no endpoints, or stop what holds the port (`ss -ltnp` shows it)."})
	// ErrPartCollision: a part key holds other records than the split's.
	ErrPartCollision = errcode.New(errcode.Def{Name: "WHARF_BACKFILL_PART_COLLISION", Text: "part holds other records",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Standing: true, Section: section,
		Meaning: "A split's part (`part-<split-id>.ndjson.zst`) already exists at the destination with other records than the split gives: another job, or a hand, wrote it. Nothing was overwritten.",
		Remedy:  "Write the backfill to a prefix of its own, or remove the foreign object after checking what it is."})
)

// The reasons an object poisons its split (ObjectError.Reason, the reason label of
// wharf_backfill_objects_failed_total).
const (
	ReasonDeleted     = "deleted"     // the object was gone when it was read
	ReasonOverwritten = "overwritten" // its ETag pin failed: it changed since planning
	ReasonCorrupt     = "corrupt"     // bad gzip or zstd, a record over max_record_bytes, another bad item
	ReasonUnreadable  = "unreadable"  // a transient failure: the store did not answer past the retry policy
)

// Reasons lists every reason.
var Reasons = []string{ReasonDeleted, ReasonOverwritten, ReasonCorrupt, ReasonUnreadable}

// ObjectError is the failure of one member of a split: it unwraps to ErrObject and to its
// cause (a store error keeps its own kind reachable).
type ObjectError struct {
	Split  string // the split's id
	Key    string // the object's key
	Reason string // one of the Reason… constants
	Err    error
}

func (e *ObjectError) Error() string {
	return fmt.Sprintf("split %s: object %q: %s: %v", short(e.Split), e.Key, e.Reason, e.Err)
}

// Unwrap returns the code and the cause.
func (e *ObjectError) Unwrap() []error { return []error{ErrObject, e.Err} }

// classify makes err, met while reading key of split, an *ObjectError when its class says it
// is the object's (errcode.Poison: deleted, overwritten; errcode.Transient: unreadable past
// the store's retry policy, or refused for the request's time; an error with no code: corrupt
// data), so that the split is handed back, retried and in the end goes on without the object.
// An error of any other class (errcode.Fatal, errcode.Operator: configuration, credentials,
// permissions, a missing bucket) and a cancellation are returned unchanged: they stop the job.
func classify(split, key string, err error) error {
	var oe *ObjectError
	if err == nil || store.IsContext(err) || errors.As(err, &oe) {
		return err
	}
	reason := ReasonCorrupt
	switch errcode.ClassOf(err) {
	case errcode.Unclassified: // a decoder's or a framer's error: the object's data
	case errcode.Transient:
		reason = ReasonUnreadable
	case errcode.Poison:
		switch {
		case errors.Is(err, store.ErrNotExist):
			reason = ReasonDeleted
		case errors.Is(err, store.ErrPreconditionFailed):
			reason = ReasonOverwritten
		}
	default:
		return err
	}
	return &ObjectError{Split: split, Key: key, Reason: reason, Err: err}
}

// short is the first 12 hex digits of a split id, as messages show it.
func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func configErr(format string, a ...any) error {
	return errcode.E("config", "backfill", ErrConfig, fmt.Errorf(format, a...))
}
