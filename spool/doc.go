// Package spool is the contract between the programs that produce files and the ship service
// that uploads them: a directory that files enter finished, durable and numbered, and leave
// only after their upload is recorded.
//
// # Layout
//
//	spool.json    format version, the spool's epoch (random, 64 bits, made once by Init), creation time,
//	              and a replay spool's replay id
//	ready/        finalized files: ready/<dataset>/<first:020>_<last:020>.<ext>
//	tmp/          files being finalized
//	catalog.log   the catalog: one JSON record per line, append-only
//	ship.lock     the owner's lock; holds the owner's PID
//
// A replay spool (InitWith, InitOptions.Replay) holds the files of one replay: files shipped
// again, such as a re-processed range. Its spool.json is format 2 (FormatReplay) and names the
// replay; ship keys its files under wharf/replays/{id}/ and refuses to ship it otherwise. A
// wharf that predates replays reads only format 1, and so refuses a replay spool.
//
// # Adding a file
//
// Add (and Create, for a program writing a file itself) puts the file in tmp/ (a hard link of
// the source when moving on one file system, otherwise a copy), hashing it with sha256 as it
// is read, fsyncs it, and then, holding an flock on catalog.log: gives it the spool's next
// sequence numbers (first, and last = first + records - 1), renames it into ready/, fsyncs
// the directory, and appends a finalized record and then an eligible record, each fsynced.
// Sequence numbers are unique and contiguous across concurrent adders in any number of
// processes. A moved source is removed only after both records are durable.
//
// Each add also records whether the clock was synchronized when the add took the file's event
// time (AddOptions.Clock, or the kernel's reading, ReadClock: adjtimex on Linux, unknown
// elsewhere). ship keys a file whose clock was not synchronized under unsynced/ instead of its
// date=/hour= partition. The zero time is no event time: Add takes the source's modification
// time for it, and no catalog holds it.
//
// # The catalog
//
// Each line is one JSON object whose "type" is one of:
//
//	finalized  {id, dataset, path, size, sha256, first, last, time, ext, clock, at}
//	eligible   {id, at}
//	uploaded   {id, key, etag, outcome, at}
//	deleted    {id, at}
//
// id is the file's first sequence number; path is relative to the spool; time is the file's
// event time (its date=/hour= partition), at the wall time of the record, both RFC 3339 UTC;
// clock is "synced" or "unsynced", and absent when unknown (every record written before wharf
// recorded it, which ship keeps keying by date=/hour=, so an upgrade moves no key).
// A file goes through the four in that order and no other. Replay checks every record against
// the ones before it: sequence numbers contiguous from 1, each record for a known file in the
// state before its own. A torn last line — no trailing newline, or the last line not JSON: an
// append a crash interrupted — is ignored with a warning naming the path and line, and cut
// away under the lock before the next append. Any other bad line is ErrCorrupt, naming the
// path and line.
//
// The owner's uploaded records are committed in groups. Concurrent Uploaded calls queue their
// records; the first caller to find no commit under way leads one (after OpenOptions.GroupDelay,
// for more to join), appending every queued record in one write and fsyncing the catalog once,
// and the others wait for it (or lead the next). Each call returns only after a catalog fsync that covers its own record; a failed
// write or fsync fails every call whose record it carried, and is truncated away. Remove
// checks that the file's uploaded record is durable, unlinks the file and leaves its deleted
// record to the next catalog write (a group, Refresh or Close), which fsyncs it with its own:
// a crash that loses the unlink or the deleted record only leaves a file to remove again
// (see Remove). The owner keeps 128 KiB of the catalog's file allocated past its end
// (fallocate), so that it can record uploads and removals, and so free space, on a file
// system that producers filled.
//
// # Guarantees
//
//   - Nothing lost: a source is removed only after its file is fsynced in ready/ and both of
//     its records are fsynced; a crash at any point leaves every file either recorded and whole
//     in ready/, or unrecorded with its source where it was.
//   - Nothing recorded that is not whole: a file is recorded only after it is durable in
//     ready/; a failed add leaves nothing in ready/ and nothing in the catalog.
//   - Nothing deleted before it is shipped: Remove refuses a file not recorded uploaded.
//   - One owner: Open takes ship.lock with flock; a second owner is refused (ErrLocked, naming
//     the lock and the PID holding it). Adders need no ownership and run beside the owner.
//     Taking ownership needs no free space: the PID is written in place, in a field the lock
//     file keeps, and a full file system only leaves it unwritten, with a warning.
//   - A move retried after a crash spools the file once: on one file system the retry finds
//     the hard link the interrupted add placed in ready/ and finishes that add. A move across
//     file systems (a copy, then the source removed) or a copy (Copy) retried after a crash
//     that came after its records, before the add returned, spools the file a second time,
//     under new sequence numbers.
//
// Open also finishes what crashes left: a file recorded finalized but not eligible is made
// eligible, a file in tmp/ that no live adder holds is removed, and a file in ready/ named like
// a spool file that the catalog does not record is removed (its add never completed, so its
// source was kept).
//
// # Errors
//
// Failures are *Error values (operation, path, catalog line, kind, cause) whose kind is
// ErrNotSpool, ErrExists, ErrLocked, ErrCorrupt, ErrInput, ErrState, ErrFull or ErrIO, or
// store.ErrNotExist for a missing source and store.ErrForbidden for a directory wharf may not
// write; each has a WHARF_… code that errcode.Of finds. A cancelled context passes through.
package spool
