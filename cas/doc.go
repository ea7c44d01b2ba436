// Package cas is the one compare-and-set interface that wharf's coordination runs over:
// small records under slash-separated keys, each with a revision that changes on every write,
// and writes conditional on it. The lease engine (package lease) holds every lease, on every
// implementation, through it alone, so that one algorithm, one skew rule and one history check
// cover the bucket and NATS JetStream key-value alike.
//
// # The contract
//
// A Store keeps records. Every implementation promises, for each key:
//
//   - Get returns the value last written and its revision, or ErrNoRecord.
//   - Create writes only when the key has no record, and Update only when the key's revision
//     is still the one given: of writers racing on one revision exactly one wins, the others
//     get ErrConflict. Update of a key without a record is ErrConflict.
//   - A write that returns nil has landed, and a write that returns ErrConflict has not: an
//     answer lost on the way back (a reset connection, a timeout, a 500) is settled inside the
//     implementation, never by sending the write again blindly (the bucket reads back the
//     random wharf-put-id the write carried; NATS reads the key back and compares the bytes).
//     Any other error leaves the outcome unknown to the caller only when the implementation
//     could not settle it either; it then says so.
//   - A revision names a value: two writes of the same bytes may be given the same revision
//     (S3's ETag is the bytes' MD5), so a writer that must tell its writes apart makes every
//     value unique (the lease's records carry a random nonce).
//   - A cancelled or expired context passes through unwrapped, and a call under a context that
//     has ended sends nothing.
//
// Keys are checked by CheckKey before any implementation sees them. Values are opaque bytes
// (wharf writes JSON); each implementation bounds their size (the bucket reads and writes at
// most MaxValue bytes, NATS refuses what exceeds its server's max_payload), refusing a write
// it could not read back with store.ErrConfig.
//
// # Implementations
//
//   - Bucket: a *store.Store, each record an object at its key, its revision the ETag (the
//     generation on GCS). It needs a store proven cas by the probe (store/probe): it cannot
//     tell a store that ignores conditions from one that enforces them.
//   - Memory: in this process only, for tests and a solo process.
//   - cas/natskv: NATS JetStream key-value, a package apart so that programs without NATS do
//     not link its client.
//
// cas/castest is the conformance suite each of them passes, against MinIO, SeaweedFS,
// fake-gcs-server, Azurite, the file store, memory and a 3-node NATS cluster.
//
// # Errors
//
// ErrNoRecord and ErrConflict are answers, not failures: test for them with errors.Is. A key
// that does not check is store.ErrConfig. Failures of the bucket keep their store kind
// (store.ErrUnavailable, store.ErrForbidden…); cas/natskv reports its own with the same kinds.
package cas
