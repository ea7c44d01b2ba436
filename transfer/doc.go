// Package transfer copies objects and files between stores, local disk and standard streams:
// the engine under `wharf cp`.
//
// PlanCopy is the one call a command makes, as rclone's operations.CopyFile and sync.CopyDir
// are: given the two ends as written (a local path, a store URL, "-") and a Stores value (the
// caller's store configuration and how it opens a store), it parses each end once, opens it
// and lists what to copy — one object, or with Recursive every file or object below a
// directory or prefix, passing over (and naming to Skipped) what cannot be copied — and its
// Run copies the plan. A local path inside no file store is read and written as plain files
// (Local); a store destination is opened with store.Config.CreateDir, so a folder store makes
// its directory on its first write. A copy from standard input or to standard output streams
// its one object. A request that cannot be made as asked is a *UsageError.
//
// Run takes a plan (a list of Tasks, each a source key and a destination key) and copies the
// tasks in parallel, Options.Jobs at a time. What it promises:
//
//   - Streaming: bytes flow from the source's Get into the destination's Put; nothing is staged
//     whole in memory or on disk. Large uploads go in parts (PutOptions.PartSize and
//     Concurrency), and at most Options.MaxParts parts are buffered across all tasks, so memory
//     is bounded by MaxParts × PartSize whatever the number of files.
//   - Verified sizes: every copy is checked against the size its source announced, before the
//     destination commits where it can (a local file, a multipart upload) and after the put
//     otherwise, in which case the short object is deleted again. A local file that gets
//     shorter or longer while it is read fails its copy with ErrLocalChanged naming it, which
//     is never retried.
//   - Fail fast, leave nothing half-done: the first failure cancels every copy in flight; a
//     cancelled put leaves nothing at its key (the store contract: no partial object, no open
//     multipart upload), and a local file is written to a temporary file in its directory and
//     renamed into place only when complete (Local).
//   - Parallel downloads: an object of at least twice Options.ReadPartSize copied to a Local
//     directory is read as ranged GETs pinned to its ETag, Parts at a time, each written at its
//     offset as it arrives (no part is buffered).
//   - Durable local files: a file copied to a Local directory is fsynced before it is renamed
//     to its final name, so it appears there only complete and synced (Local.Durability can
//     trade this away). The sync and rename run
//     on Options.Committers goroutines behind a bounded queue, off the copying goroutines,
//     which go on reading the network meanwhile; large files ask the kernel to start writing
//     their pages out as they arrive, so the final fsync has little left to wait for. Small
//     files (up to 1 MiB) are synced in batches instead: one syncfs(2) covers every small file
//     finished meanwhile, up to 64, and only then are they renamed, which sends their data and
//     inodes to the disk as a few merged writes instead of two small writes per file. Run
//     returns only once every commit has finished; once the run fails or is cancelled, files
//     still queued are removed, not renamed.
//   - What the object carries: a copy into a store keeps the source's content type, standard
//     headers and user metadata (store.Carry; never its wharf-put-id). A local file has a
//     content type from its extension, else application/octet-stream (ContentTypeOf).
//   - With Options.IfAbsent every put is a conditional create: an existing destination is never
//     replaced. Such refusals do not stop the other copies; Run returns
//     store.ErrPreconditionFailed naming the first one and how many there were.
//   - Every byte read from a store is checked against the CRC-32C the object carries
//     (store.ObjectInfo.CRC32C): a download as it writes (each range of a parallel download
//     on its own, combined), a copy into another store by that store's put
//     (PutOptions.CRC32C), standard output at its end. A mismatch is store.ErrChecksumMismatch
//     naming the object, and leaves nothing at the destination; an object that carries none
//     is copied and counted in Summary.Unverified (verify.go).
//
// PlanSync is the engine under `wharf sync`: it lists a source tree and a destination tree at
// once and plans the copies that make the destination hold what the source holds — a create
// that never replaces for a key the destination lacks, a replace of exactly the version
// listed for one it holds another version of — and, with SyncOptions.Delete, the removal of
// what is only in the destination. SyncPlan.Run makes the copies, then the removals only if
// every copy succeeded and no guard holds (the source listing passed over something, an
// empty source, more than MaxDelete); whatever another writer changed after the listing is
// left as it made it and ends the run with ErrSyncConflict.
//
// Local is a directory on the local disk seen through the same Get/Put/Walk interface as a
// store, holding plain files (no metadata sidecars). A key names a file there only when it is
// a plain relative path (Local.Path); its walk reports what it passes over (broken links,
// special files) and goes on. Run reports progress through Progress and
// prints nothing.
package transfer
