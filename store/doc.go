// Package store is wharf's storage layer: one small contract (Store) that every backend
// satisfies, the URL → backend registry, typed errors, the retry policy, and the probe that
// proves what a store really guarantees.
//
// # The contract
//
// Store has Get (optionally pinned to an ETag, optionally a byte range), Head, Put
// (create-if-absent, replace-if-match or unconditional; user metadata; a body of known or
// unknown size, sent in parts when large), Delete (optionally conditional) and List (one sorted
// page; Walk follows every page). Extra capabilities are separate interfaces found by type
// assertion through wrappers (As): Copier (server-side copy; Copy falls back to a stream) and
// BucketMaker. Each method's documentation says which error kind each failure returns.
//
// # Errors
//
// Every failure is an *Error carrying the operation and key, and unwraps to exactly one kind
// that callers test with errors.Is: ErrNotExist, ErrPreconditionFailed, ErrBucketMissing (never
// read as empty), ErrForbidden, ErrUnsupported, ErrUnavailable (retries spent; names the
// request and claims nothing about content), ErrOutcomeUnknown (a conditional put whose answer
// was lost: resolve it with ResolvePut) and ErrKeyInvalid. Each kind has a stable WHARF_… code
// (Code). Context cancellation passes through as the context's own error.
//
// # URLs
//
//	file:///abs/dir, ./dir, /abs/dir   the local filesystem (store/file)
//	s3://bucket/prefix                 S3 and S3-compatible stores (store/s3)
//	r2://account-id/bucket/prefix      Cloudflare R2
//	gs://bucket/prefix                 Google Cloud Storage
//	az://account/container/prefix      Azure Blob Storage
//	mem://name/prefix                  in-process, for tests and examples (store/mem)
//	- or stdout://                     standard output, write-only (store/stdout)
//
// Query parameters endpoint, region and anonymous configure the backend. Open checks the
// endpoint (http only on loopback; the allowlist) and that credentials are references
// (env://NAME, file:///path) before any connection.
//
// # Retry
//
// RetryPolicy is the one retry policy: backends turn their SDK's retries off, Open wraps every
// backend with Retry, and backends apply the same policy to requests they make on their own
// (each part of a multipart upload).
package store
