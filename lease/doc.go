// Package lease holds fenced leases and a commit log in a store itself, through conditional
// writes, so that a job can run from any machine and two machines never both act as its
// writer: `wharf lease`, exports with `state: bucket`, and any job that needs one writer.
//
// # Objects
//
// Below the store's root, for a lease name:
//
//	_wharf/leases/<name>.json            the lease: holder node, fence, TTL, released flag
//	_wharf/pointers/<name>.json          the pointer: the highest fence acquired, the log's head
//	_wharf/log/<name>/<seq>.f<fence>.json one commit: kind, seq, fence, node, the previous entry
//
// # What a lease promises
//
//   - Acquire creates the lease object under If-None-Match, or replaces one that is released or
//     expired under If-Match on the ETag it read. The new fence is one above the old, so no two
//     acquisitions ever hold one fence. It then raises the pointer's fence to its own by
//     If-Match: from then on, no commit of an earlier holder can land.
//   - Expiry is judged only on the judging machine's monotonic clock: a contender that reads a
//     held lease notes its ETag and the time, and takes it over only if the same ETag is still
//     there TTL + Skew later. Wall-clock times in the objects are for people; no machine compares
//     them. The holder renews every RenewEvery (default TTL/3) by If-Match, and stops committing
//     once TTL − Skew has passed since the send of its last successful renewal: a commit past
//     that point renews first.
//   - Release is an If-Match replace that marks the lease released, never a delete: fences never
//     go back, and no store's conditional delete is relied on.
//   - A commit creates the next entry under If-None-Match, carrying the fence, then advances the
//     pointer to it by If-Match. A holder fenced past fails ErrFenced; the entry it wrote is
//     never readable, because readers (Log) follow the pointer and each entry's Prev, never a
//     listing. An entry's key holds its seq and fence: one acquisition holds one fence, so two
//     holders never write one key.
//   - A conditional write whose answer was lost (or refused after a throttled attempt) is
//     settled by reading back the random wharf-put-id it carried, never by sending it again.
//   - The fence protects the commit log, not arbitrary objects: a plain put a paused holder had
//     in flight can still land after a takeover. A job therefore records in the log what a
//     reader may trust (an export: the sha256 of its manifest), and readers trust only that.
//
// # Stores
//
// Open probes the store (store/probe) unless given a result. A store proven cas gets bucket
// leases. A file store on a network mount type (anything but ext4, xfs, btrfs, zfs, tmpfs,
// overlay, apfs or hfs) is single-writer: it gets a machine lease, an exclusive flock on a lock
// file of this machine, and acquiring writes no lease object or pointer (commits still go
// through the pointer); Config.Coordination "cas" refuses it. Any other store not proven cas
// fails ErrCoordinationUnproven. A bucket lease needs a node id other than "local"
// (WHARF_NODE_ID), else ErrNodeIDLocal.
//
// # Errors
//
// ErrHeld (exit 75: skipped, try later; a *HeldError names the holder and this machine's
// expiry), ErrFenced, ErrNotHeld (the lease object is left untouched), ErrNodeIDLocal,
// ErrCursorKindMismatch (an entry of another kind than its log's), ErrCoordinationUnproven,
// and store.ErrConfig for a config or name that does not check. Store failures keep their own
// kind. A cancelled context passes through.
package lease
