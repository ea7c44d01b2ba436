// Package store is what callers of wharf's storage layer use: the portable *Store over any
// backend, opened from a URL, with one contract whatever the store underneath.
//
// # The contract
//
// A Store has Get (optionally pinned to an ETag, optionally a byte range), Head, Put
// (create-if-absent, replace-if-match or unconditional; content type, standard headers and
// user metadata; a body of known or unknown size, sent in parts when large), Delete
// (optionally conditional), List (one sorted page; Walk follows every page), and Copy,
// DeleteMany and MakeBucket, done natively where the backend can and another way where it
// cannot. Each method's documentation says which error kind each failure returns. The
// backends implement package driver's Bucket; a Store wraps one, and validates keys, applies
// its prefix and the retry policy and provides the fallbacks, once for all of them.
//
// Callers ask a store what they must know of its backend rather than test its scheme:
// VerifyByHash says its ETags do not prove content and reads are cheap (the file store: hash
// an object to vouch for its bytes), ListUploads whether it keeps incomplete uploads, and
// Config.WriteOnly, before anything is opened, whether it keeps nothing (standard output).
//
// # URLs
//
// Open takes a URL; everything after the bucket is the key, byte for byte (#, %, ?, + and
// spaces included), as in aws-cli and s5cmd. The forms are the registered backends' (see
// cmd/wharf's backends.go): ./dir, /abs/dir and file:///abs/dir (the local filesystem),
// s3://bucket/key, r2://account/bucket/key, gs://bucket/key, az://account/container/key,
// mem://name/key, and - (standard output). A store's options (endpoint, region, credential
// references…) never come from the URL: Config fills them from the backend's defaults, the
// environment the backend documents, a config file's sections and the flags, in that order,
// and checks them (endpoint rules, credential references) before any connection.
//
// # Errors
//
// Every failure is an *Error carrying the operation and key that unwraps to exactly one kind,
// tested with errors.Is: ErrNotExist, ErrPreconditionFailed, ErrBucketMissing (never read as
// empty), ErrForbidden, ErrClockSkewed (the store refused the time the request was signed
// with), ErrUnsupported, ErrUnavailable (retries spent; names the request and
// claims nothing about content), ErrOutcomeUnknown (a conditional put whose answer was lost:
// settle it with ResolvePut), ErrKeyInvalid, and ErrConfig and the other configuration kinds of
// package driver before any connection. Each kind is an *errcode.Code with a stable WHARF_…
// name. A cancelled context passes through as the context's own error.
//
// # Retry
//
// One policy (driver.RetryPolicy) for every backend: backends turn their SDK's retries off,
// a Store applies the policy to every call, and backends apply it to the requests they make
// on their own (each part of a multipart upload).
package store
