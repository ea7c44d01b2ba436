// Package backfill reads every object under a prefix — NDJSON, plain, gzip or zstd — as
// records into a sink, as a bounded job shared by any number of workers, with nothing lost
// and nothing spliced. docs/backfill.md is the user's account; this is the contract.
//
// # What a job promises
//
//   - One plan for the life of a job: the job's current plan (Current) is the state of the
//     leader lease, written only by its holder's fenced writes. A worker that acquires the
//     leader lease reads the plan there in the acquisition's own request (the record it
//     replaces under the revision it read), and plans only when there is none, making its
//     plan current in the write that releases the lease: a leader fenced off while it listed
//     has made nothing current. Options.Replan plans again only a plan that has ended, as the
//     next generation; a split's state records the generation of the plan whose worker wrote
//     it last, and a worker of an earlier plan takes no such split (it learns that its plan
//     was superseded and takes the current one). So a worker holding a superseded plan can
//     neither commit a split nor write the manifest (see Finishing).
//   - Planning: the leader lists the prefix once and
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
//   - Progress: a split is held by its lease (split-<id>, package lease), whose state is the
//     split's (SplitState). Its Watermark is committed only after the sink acknowledged the
//     records before it, by a save of the state in the lease record (one request, a
//     compare-and-set at the revision its holder wrote last): once another worker took a split
//     over (it saw the split's lease record unchanged for Config.LeaseTTL plus the skew bound
//     Config.LeaseSkew on its own monotonic clock), the old holder can commit nothing. A holder
//     stops by its own deadline, LeaseTTL − LeaseSkew after its last successful write. The new
//     holder finds the watermark in the record it took over and resumes from it, checking that
//     the delivered records end at the recorded byte (drift). Delivery is at-least-once. A
//     worker that stops on an error hands back every split it holds, one leased just before
//     the error included.
//   - Node ids: each worker holds the lease of its node id (node-<id>) while it runs. A second
//     live worker with the same id, which sees that lease's record change while it watches it,
//     stops with ErrNodeInUse, handing back its splits; a worker started again after its
//     predecessor died sees no change and takes the lease over after LeaseTTL + LeaseSkew.
//   - Poison: a member whose read fails with an error of class errcode.Poison (deleted,
//     overwritten) or errcode.Transient (unreadable past the store's retry policy, refused for
//     the request's time), or with no code (corrupt), fails an attempt of its split with an
//     *ObjectError naming it and a reason; the
//     split is handed back (a streaming sink first commits what its reader received), counted
//     in wharf_backfill_objects_failed_total{reason}, and tried again. Each bad member has its
//     own count (SplitState.Bad): one that failed Config.MaxAttempts times is quarantined, and
//     the split's later attempts deliver its other members without it; the split ends
//     quarantined (done but for those objects). A job with quarantined objects ends with
//     ErrQuarantined naming each object and reason, never silently incomplete. An error of
//     class errcode.Operator or errcode.Fatal (credentials, permissions, a missing bucket,
//     configuration) stops the job at once.
//   - Sinks (Sink): Stdout (one record a line; a record counts as delivered once the reader
//     received it: the bytes a pipe still holds are not, a regular file is synced before a
//     commit; committed every Config.CommitInterval, at a split's end and when a bad object
//     stops an attempt; nothing after a write error); StoreSink (one part per split, named by
//     the members it holds (Split.PartID), written whole with a create-if-absent put and a
//     deterministic encoding, a part already there with the same records counted as written
//     whether the store refused the create before or after taking the body: exactly once;
//     then the dataset contract's manifest.json, format lines (records of any bytes), and
//     _SUCCESS, so dataset.Validate, deep or not, certifies the output); Consumer (the Go API:
//     batches with offsets and an explicit, durable Commit).
//
// # Finishing
//
// When every split of the plan is final, a worker takes the leader lease and finishes the
// sink. The record its acquisition replaced must name this worker's plan, still running: only
// then may it write. It renews the lease (a fenced write: it holds the lease now, and its
// deadline is LeaseTTL − LeaseSkew from that renewal's send), and runs Sink.Finish (the store
// sink's manifest.json and _SUCCESS) under a context that ends when the lease is lost or that
// deadline passes (the lease's own timer). No other worker can take the leader lease over
// before 2 × LeaseSkew after that deadline, the plan cannot change while the lease is held,
// and whichever leader finishes the one plan writes the same bytes; so a manifest write in
// flight when a leader is cut off certifies the plan the status reports, or lands before any
// other leader could act. The job's end is then recorded in the record, in the release's one
// fenced write; a leader that lost the lease before it leaves the end to the next leader,
// which writes the same manifest again.
//
// # Coordinators
//
// A Coordinator is a compare-and-set store of the job's own records (package cas) with the
// one lease engine (package lease) over it, so that one algorithm, one skew rule and one
// history check cover export, `wharf lease run` and backfill: NewSolo (cas.Memory, in-process:
// a restart replays the prefix, and Run warns so), NewBucket (cas.Bucket, objects below
// BucketPrefix; its leases by lease.Open, which refuses a store the probe did not prove cas)
// and NewCAS (a cas.Store such as cas/natskv's NATS JetStream key-value, in NATSBucket(job);
// its leases by lease.OpenCAS). The records are laid out as Coordinator's doc says.
//
// # Assembling a worker
//
// Open assembles a worker from its Config and an Env (the program's variables, standard
// output, log and version, the options of the stores the Config gives none for, the probe's
// remembered verdicts, and a test hook's wrap of the sink): it opens the source at its bucket's root,
// the sink (Stdout over Env.Stdout, told apart as a pipe, a regular file or anything else, or
// a StoreSink at Config.To), the coordinator Config.Coordinator names (the bucket's behind the
// probe, or NATS with its credentials resolved), the Job, and the server of the status page
// (/: this worker and the whole job as the coordinator records it), /metrics, /status and
// /healthz on Config.Listen; Worker.Close closes them. ReadReport reads a job's records
// the same way, for reading only. New takes what a program opened itself.
//
// # Errors
//
// Run returns nil, ErrQuarantined, ErrAlreadyComplete (the plan had finished; Options.Replan
// lists again), ErrJobMismatch (the job name is used for another source or sink),
// ErrNodeInUse (another live worker has this node id), or a fatal error: ErrCoordinator,
// ErrSink, ErrPartCollision, ErrCoordinationUnproven (lease's: a bucket coordinator on a store
// not proven cas), a store error of its own kind (forbidden, a missing bucket), ErrConfig. Each is an *errcode.Code tested with errors.Is; messages name
// the job, the split, the object key and the reason. A cancelled context passes through, after
// the worker handed its splits back.
package backfill
