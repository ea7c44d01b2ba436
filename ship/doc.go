// Package ship is the ship service: it takes the finalized files of a spool (package spool)
// to a store, each under one deterministic key, and applies local retention only after the
// spool has recorded the upload.
//
// # What it promises
//
//   - Keys are deterministic and Hive-style (ObjectKey):
//     wharf/v1/{pipeline}/{dataset}/date=YYYY-MM-DD/hour=HH/{node}_{epoch:016x}_{first:020}_{last:020}.{ext}
//     below the destination's prefix, with the date and hour of the file's time in UTC. A file
//     whose clock was not synchronized when it was spooled (spool.ClockUnsynced) goes under
//     {dataset}/unsynced/ instead of date=/hour=: its time cannot say which partition it
//     belongs to. A file whose clock is unknown (spooled before wharf recorded it) keeps its
//     partition.
//   - Replays are isolated (Config.Replay): a replay spool's files go under
//     wharf/replays/{replay}/v1/… (ReplayKey), never under wharf/v1/; Run refuses a replay
//     spool without its id (ErrReplayIntoProduction) and an id on any other spool
//     (ErrReplayMismatch), before it opens the store.
//   - Every object carries wharf-sha256, wharf-range ("first-last"), wharf-dataset and
//     wharf-node metadata (Metadata).
//   - An object already at a file's key is verified by size and wharf-sha256 (by its content
//     when the metadata is missing): equal is success (outcome conflict_equal, the path after
//     a crash between the upload and the spool's record of it); different is
//     ErrObjectKeyCollision, which stops shipping for good and names the file, the key, and
//     the misconfiguration (a spool epoch or node id used twice). Nothing is overwritten to
//     make way. The one exception is a damaged copy of the file itself: an object carrying
//     the file's wharf-sha256 with another size (a proxy or the network dropped part of a
//     put's body). It is named (ErrUploadTruncated, transient), and the file is written over
//     it: If-Match on its ETag in create mode, a plain put in overwrite mode, then verified.
//   - Put modes (Config.ConditionalPut): create sends every put as create-if-absent and
//     refuses to start on a store whose probe did not prove conditional create; overwrite
//     sends plain puts, checks the key by HEAD before each put and verifies the object by
//     HEAD after it; auto is create where the probe proved it, overwrite elsewhere.
//   - A file is recorded uploaded (Spool.Uploaded) only after the store accepted it, the bytes
//     sent were shown to be the bytes spooled, and, in overwrite mode, after the verification;
//     local retention runs only after that record is durable. A file that was never recorded
//     uploaded is never deleted. An upload frees its slot as soon as the store has the object:
//     the record is written beside the next upload (the spool commits the records of files
//     finishing within 10 ms in one fsync), and the file stays in flight, neither sent again nor
//     removed, until it is. The removal runs beside the uploads too; a stop or a drain waits
//     for the records and removals under way.
//   - A record that cannot be written (a full spool) is retried like an upload, without
//     sending the file again; it never stops the service.
//   - Each file is retried with exponential backoff and jitter, without limit; only a fatal
//     error (errcode.ClassOf is errcode.Fatal: a collision, a spooled file that changed or
//     vanished, a configuration error) stops the service.
//   - Multipart uploads share UploadConcurrency parts in flight. A large file is offered to the
//     store for reading in place (io.ReaderAt: the S3 backend sends each part straight from
//     the file); backends that buffer parts hold at most UploadConcurrency × PartSize. That
//     the bytes sent are the bytes spooled is shown either way (see body).
//   - Before a large file is sent, the incomplete uploads at exactly its key are aborted: the
//     key holds the spool's epoch and the node id, and the spool's one owner has no upload of
//     the file under way, so they are what an earlier run of this service left.
//   - On cancellation (SIGTERM) no new upload starts, uploads in flight get Config.Grace to
//     finish, then are cancelled (a cancelled multipart upload is aborted by the store layer),
//     and Run returns nil. A restart resumes from the spool's catalog.
//   - Iceberg tables (Config.Iceberg): the shipped Parquet files of the datasets named are
//     appended to one Apache Iceberg table per dataset (package iceberg), at the dataset's
//     root, in group commits (at most CommitFiles files, at the latest CommitInterval after
//     the oldest landed). A file is committed only after its upload is recorded, and its
//     local retention waits for the commit. Each snapshot's commit id names this spool (node,
//     epoch) and its files' sequence numbers; at start the service reads from the table which
//     of its files it holds, and a failed commit is retried under the same id: each file is in
//     at most one snapshot, and every Parquet file of the dataset is in one, across crashes.
//     A file the table cannot take (not Parquet, columns missing or of another type) is
//     shipped, left out of the table and named (iceberg.ErrSchemaChanged); a new column
//     evolves the schema. The store must be proven cas (probe.ErrCoordinationUnproven
//     otherwise, before anything is shipped), unless Tables.Catalog keeps the tables in a
//     SQL catalog (as {pipeline}.{dataset}), whose database makes the compare-and-set.
//
// # Errors
//
// Run returns ErrObjectKeyCollision (WHARF_OBJECT_KEY_COLLISION) on a collision,
// ErrReplayIntoProduction and ErrReplayMismatch for a spool and a Config.Replay that disagree, ErrListen
// (WHARF_SHIP_LISTEN_FAILED) when Config.Listen cannot be bound, the spool's kinds
// (spool.ErrNotSpool, spool.ErrLocked, spool.ErrCorrupt) when the spool cannot be used,
// store.ErrBucketMissing (naming the bucket alone, and the command that makes it),
// probe.ErrCoordinationUnproven when conditional_put is create and the store did not prove
// conditional create, and store.ErrConfig for an invalid Config. Transient store errors never
// leave Run: they are retried and reported through metrics, status and logs.
//
// # Observability
//
// Handler serves the status page at / (HTML made from Status: no script, no asset), /metrics
// (Prometheus text, from a registry of the Shipper's own), /status (JSON, Status) and
// /healthz: 200 while healthy (probing and retrying included), 503 once three attempts in a
// row failed with an error that needs an operator (class errcode.Operator: refused or missing
// credentials, a missing bucket, a full spool, uploads arriving damaged;
// back to 200 at the next success)
// and once fatal. A request the store refused for its time (store.ErrClockSkewed) is
// retried like an outage and keeps /healthz at 200, degraded: a warning, /status and /healthz
// name the skew the store's answer showed. The
// backlog and the spool's gauges are true in every state: read before the probe, while it
// waits, and after a fatal error. Every upload is logged with fixed keys: file_id, dataset,
// key, size, sha256, outcome, duration, attempt. No credential ever reaches a log line, the
// status page or a metric: the store is named by its location only. The startup probe's
// sentinel is tagged with the node id and the spool's epoch; each probe removes those
// earlier runs left.
package ship
