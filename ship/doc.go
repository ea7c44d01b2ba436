// Package ship is the ship service: it takes the finalized files of a spool (package spool)
// to a store, each under one deterministic key, and applies local retention only after the
// spool has recorded the upload.
//
// # What it promises
//
//   - Keys are deterministic and Hive-style (ObjectKey):
//     wharf/v1/{pipeline}/{dataset}/date=YYYY-MM-DD/hour=HH/{node}_{epoch:016x}_{first:020}_{last:020}.{ext}
//     below the destination's prefix, with the date and hour of the file's time in UTC.
//   - Every object carries wharf-sha256, wharf-range ("first-last"), wharf-dataset and
//     wharf-node metadata (Metadata).
//   - An object already at a file's key is verified by size and wharf-sha256 (by its content
//     when the metadata is missing): equal is success (outcome conflict_equal, the path after
//     a crash between the upload and the spool's record of it); different is
//     ErrObjectKeyCollision, which stops shipping for good and names the file, the key, and
//     the misconfiguration (a spool epoch or node id used twice). Nothing is overwritten to
//     make way.
//   - Put modes (Config.ConditionalPut): create sends every put as create-if-absent and
//     refuses to start on a store whose probe did not prove conditional create; overwrite
//     sends plain puts, checks the key by HEAD before each put and verifies the object by
//     HEAD after it; auto is create where the probe proved it, overwrite elsewhere.
//   - A file is recorded uploaded (Spool.Uploaded) only after the store accepted it and, in
//     overwrite mode, after the verification; local retention runs only after that record. A
//     file that was never recorded uploaded is never deleted. The removal runs beside the
//     uploads (the next upload does not wait for it), and the spool commits the records and
//     removals of files finishing together in groups, one fsync each (see package spool);
//     a stop or a drain waits for the removals under way.
//   - Each file is retried with exponential backoff and jitter, without limit; only a fatal
//     error (a collision, a spooled file that changed or vanished, a configuration error)
//     stops the service.
//   - Memory for multipart uploads is bounded by UploadConcurrency × PartSize across all
//     uploads: large uploads share that many part buffers.
//   - On cancellation (SIGTERM) no new upload starts, uploads in flight get Config.Grace to
//     finish, then are cancelled (a cancelled multipart upload is aborted by the store layer),
//     and Run returns nil. A restart resumes from the spool's catalog.
//
// # Errors
//
// Run returns ErrObjectKeyCollision (WHARF_OBJECT_KEY_COLLISION) on a collision, the spool's
// kinds (spool.ErrNotSpool, spool.ErrLocked, spool.ErrCorrupt) when the spool cannot be used,
// probe.ErrCoordinationUnproven when conditional_put is create and the store did not prove
// conditional create, and store.ErrConfig for an invalid Config. Transient store errors never
// leave Run: they are retried and reported through metrics, status and logs.
//
// # Observability
//
// Handler serves /metrics (Prometheus text, from a registry of the Shipper's own), /status
// (JSON, Status) and /healthz (200, or 503 once fatal). Every upload is logged with fixed
// keys: file_id, dataset, key, size, sha256, outcome, duration, attempt. No credential ever
// reaches a log line, the status page or a metric: the store is named by its location only.
package ship
