// Package backfill reads every object under a prefix — NDJSON, plain, gzip or zstd — as
// records into a sink, as a bounded job shared by any number of workers, with nothing lost
// and nothing spliced. docs/backfill.md is the user's account; this is the contract.
//
// # What a job promises
//
//   - Planning: the leader (the holder of the job's leader lease) lists the prefix once and
//     packs the sorted listing into splits of whole objects (Pack: Config.SplitBytes,
//     Config.SplitMaxObjects; an object larger than the target is a split alone). A split's id
//     (SplitID) is the sha256 of PackingVersion and each member's key and ETag; its descriptor
//     (Split) holds keys, sizes and ETags, so workers never list. Every record of a plan is
//     created if absent: replanning an unchanged prefix writes nothing new, done splits stay
//     done, and an overwritten object is a new split. Objects added after the listing are not
//     part of the job. A listing never takes wharf's own records (keys with a _wharf segment
//     at any depth), and New refuses a destination or a bucket coordinator whose keys a
//     listing of the source would take (Apart): the output is never read back as input.
//   - Reading: a worker leases up to Config.MaxInFlight splits and reads each member pinned to
//     its planned ETag, in ranged GETs (Config.ReadRequest, Config.ReadConcurrency in flight),
//     a server that ignores the pin caught by the ETag it returns; decompresses it by
//     extension or magic bytes (gzip of several members, zstd of several frames); cuts NDJSON
//     records (Config.MaxRecordBytes: a longer one is corruption) in place, in pooled
//     buffers, a few batches ahead of the sink, at most GOMAXPROCS members at once across
//     the splits in flight; and gives each record an Offset (member ordinal, record index). Config.ReadWindow bounds what a split holds: the ranges fetched
//     ahead and, set aside from it, about 6 MiB for the decoder and the batches on their way
//     to the sink.
//   - Progress: a split's Watermark is committed only after the sink acknowledged the records
//     before it, as a compare-and-set at the revision its holder wrote last: once another
//     worker took a split over (it saw the split's record unchanged for Config.LeaseTTL on its
//     own monotonic clock), the old holder can commit nothing. The new holder resumes from the
//     watermark, checking that the delivered records end at the recorded byte (drift).
//     Delivery is at-least-once. A worker that stops on an error hands back every split it
//     holds, one leased just before the error included.
//   - Poison: a member deleted, overwritten, corrupt or unreadable past the store's retry
//     policy fails an attempt of its split with an *ObjectError naming it and a reason; the
//     split is handed back (a streaming sink first commits what its reader received), counted
//     in wharf_backfill_objects_failed_total{reason}, and tried again. Each bad member has its
//     own count (SplitState.Bad): one that failed Config.MaxAttempts times is quarantined, and
//     the split's later attempts deliver its other members without it; the split ends
//     quarantined (done but for those objects). A job with quarantined objects ends with
//     ErrQuarantined naming each object and reason, never silently incomplete. Credential and
//     configuration errors are fatal at once.
//   - Sinks (Sink): Stdout (one record a line; a record counts as delivered once the reader
//     received it: the bytes a pipe still holds are not, a regular file is synced before a
//     commit; committed every Config.CommitInterval, at a split's end and when a bad object
//     stops an attempt; nothing after a write error); StoreSink (one part per split, named by
//     the members it holds (Split.PartID), written whole with a create-if-absent put and a
//     deterministic encoding, a part already there with the same records counted as written
//     whether the store refused the create before or after taking the body: exactly once;
//     then the export contract's manifest.json, format lines (records of any bytes), and
//     _SUCCESS, so export.Validate, deep or not, certifies the output); Consumer (the Go API:
//     batches with offsets and an explicit, durable Commit).
//
// # Coordinators
//
// A Coordinator keeps a job's records with revision compare-and-set; Solo (in-process: a
// restart replays the prefix, and Run warns so), Bucket (objects under BucketPrefix, If-None-
// Match / If-Match puts; the caller proves the store cas with the probe first) and
// backfill/natskv (NATS JetStream key-value) all pass backfill/coordtest.
//
// # Errors
//
// Run returns nil, ErrQuarantined, ErrAlreadyComplete (the plan had finished; Options.Replan
// lists again), ErrJobMismatch (the job name is used for another source or sink), or a fatal
// error: ErrCoordinator, ErrSink, ErrPartCollision, a store error of its own kind (forbidden,
// a missing bucket), ErrConfig. Each is an *errcode.Code tested with errors.Is; messages name
// the job, the split, the object key and the reason. A cancelled context passes through, after
// the worker handed its splits back.
package backfill
