// Package lease holds fenced leases and a commit log in a compare-and-set store (package cas:
// the bucket itself, or NATS JetStream key-value), so that a job can run from any machine and
// two machines never both act as its writer: `wharf lease`, exports with `state: bucket`, and
// any job that needs one writer. One engine, one skew rule and one history check cover every
// store.
//
// # Records
//
// Below the store's root, for a lease name:
//
//	_wharf/leases/<name>.json             the lease record: holder node, fence, TTL, released
//	                                      flag, the log's head (kind, seq, head key, and the
//	                                      head entry itself up to InlineMax), saved state
//	_wharf/log/<name>/<seq>.f<fence>.json one commit: kind, seq, fence, node, the previous entry
//
// (wharf before record format 2 kept the log's head in _wharf/pointers/<name>.json; the first
// acquisition of such a lease takes it into the record and raises the pointer's fence, which
// fences that wharf's holder as its own acquisitions did, and readers fall back to it.)
//
// # What a lease promises
//
//   - Acquire creates the lease record (create-if-absent), or replaces one that is released or
//     expired under the revision it read. The new fence is one above the old, so no two
//     acquisitions ever hold one fence.
//   - Every write a holder makes — renewal, commit, save, release — replaces the same record
//     under the revision the holder itself wrote last. An acquisition changes that revision,
//     so from the moment Acquire's write lands no write of an earlier holder can land: its
//     condition names a revision that is gone. That is the fence: it needs no second object.
//   - A commit creates the next entry (create-if-absent), carrying the fence, then replaces
//     the record naming it as the head. A holder fenced past fails ErrFenced; the entry it
//     wrote is never readable, because readers (Log) follow the record and each entry's Prev,
//     never a listing. An entry's key holds its seq and fence: one acquisition holds one
//     fence, so two holders never write one key.
//   - Release replaces the record marking it released, never a delete: fences never go back
//     (unless the record itself is deleted by hand, which makes a fresh lease), and no store's
//     conditional delete is relied on.
//   - A conditional write whose answer was lost is settled inside the cas store (the bucket
//     reads back the random wharf-put-id it carried), never by sending it blindly again. A
//     commit whose replace is cut at the holder's deadline before that settles is settled by
//     reading the record: one that landed returns its entry. Any other write of the record
//     cut at the deadline in flight (a renewal, save or release) may land all the same,
//     before any takeover (it is conditional on the revision this holder wrote last): its
//     error holds ErrMayHaveLanded, and the next holder finds the record as it was or as
//     the cut write made it.
//   - A holder may keep state in the record (Save: one request, fenced and renewing like a
//     commit; ReleaseWith: saved and released in the same write). The next holder finds it in
//     the record it takes over (Lease.State); a fenced holder's save never lands. AcquireIf
//     shows the caller that state in the acquisition's own read and writes nothing when the
//     caller declines (a backfill's split, done).
//   - The fence protects the commit log and the record, not arbitrary objects: a plain put a
//     paused holder had in flight can still land after a takeover. A job therefore records in
//     the log what a reader may trust (an export: the sha256 of its manifest), and readers
//     trust only that.
//
// # Why the record carries the log's head
//
// Before format 2 the log's head was a pointer object of its own, and every acquisition
// raised the pointer's fence by a third write, so that an earlier holder's commit (a replace
// of the pointer under its ETag) failed. With the head in the lease record, the acquisition's
// one write does the same: an earlier holder's commit replaces the record under the revision
// it wrote, and the acquisition replaced that revision. Nothing is guarded less: before
// Acquire returns, every earlier holder's renewals, commits and releases are already refused,
// exactly as the raised pointer refused its commits; and a holder's commit is refused the
// moment any later acquisition lands, whatever either side's clock says. The record carries
// the head entry itself when it is at most InlineMax bytes, so a holder reads the last commit
// with the lease (Lease.Head). A leased run (an export with `state: bucket`) therefore costs 5
// requests: read and replace the record; create an entry and replace the record; replace the
// record released (7 before: the pointer's raise, and the read of the last entry).
//
// # Time
//
// Expiry is judged only on the judging machine's monotonic clock: a contender that reads a
// held lease notes its revision and the time, and takes it over only if the same revision is
// still there TTL + Skew later. Wall-clock times in the records are for people; no machine
// compares them. The holder renews RenewEvery (default TTL/3) after its last successful write
// (a holder that commits or saves more often sends no renewal on top). Its deadline is TTL −
// Skew after the send of its last successful write: a timer of its own, independent of any
// request in flight, loses the lease there (Lost closes, with ErrNotHeld joined to
// ErrDeadlinePassed), and every request a holder makes is cancelled at its deadline. A lease
// lost is lost for good: acquire again. A contender that saw the holder's last write cannot
// take over before 2 × Skew after that deadline. TTLs are at most MaxTTL (7 days) and every
// sum of times saturates instead of wrapping round.
//
// # Stores
//
// Open probes the store (store/probe) unless given a result or a remembered cas verdict. A
// store proven cas gets bucket leases (ModeBucket). A file store on a network mount type
// (anything but ext4, xfs, btrfs, zfs, tmpfs, overlay, apfs or hfs) is single-writer: it gets
// a machine lease (ModeMachine), an exclusive flock on a lock file of this machine, and
// acquiring writes nothing (commits still go through the record); Config.Coordination "cas"
// refuses it. Any other store not proven cas fails ErrCoordinationUnproven. OpenCAS opens a
// Leaser over any cas.Store (NATS JetStream key-value, memory), ModeCAS, without a probe.
// Options.Fresh says no wharf of record format 1 kept leases in the store: a new name is then
// acquired in two requests, without looking for a format-1 pointer.
//
// A store proven cas may stop enforcing conditions later (a proxy that strips them, a
// gateway reconfigured). Every CheckEvery-th acquisition (counted across this machine's
// processes beside the remembered verdict) replaces the record once more under the revision
// it just replaced: one request, which a store that enforces conditions refuses. A store that
// accepts it fails the acquisition ErrCoordinationUnproven, the remembered verdict is
// forgotten, and the next Open probes again.
//
// A bucket lease needs a node id other than "local" (WHARF_NODE_ID), else ErrNodeIDLocal.
// Two processes given one node id are two holders all the same: an acquisition never takes a
// record naming its own node for its own, and a *HeldError says so (Self) and whether the
// record changed since this Leaser's previous look (Live: its holder is alive, not one that
// died).
// A holder adopts a renewal that `wharf lease renew` made for its node (same fence, same node,
// not released): it goes on; a release by name ends it.
//
// # Errors
//
// ErrHeld (exit 75: skipped, try later; a *HeldError names the holder and this machine's
// expiry), ErrFenced, ErrNotHeld (the record is left untouched; joined to ErrDeadlinePassed
// when the holder's deadline passed), ErrNodeIDLocal, ErrCursorKindMismatch (an entry of
// another kind than its log's), ErrCoordinationUnproven, and store.ErrConfig for a config or
// name that does not check. Store failures keep their own kind. A cancelled context passes
// through.
package lease
