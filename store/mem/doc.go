// Package mem is an in-process store for tests and examples. It keeps every object in memory,
// is safe for concurrent use, and enforces every condition of the store contract exactly:
// create-if-absent, replace-if-match, conditional delete and pinned reads. Each write gets a
// fresh ETag, so two writes of the same bytes are told apart.
//
// # URLs
//
//	mem://name/prefix
//
// Every Open of mem://name in one process sees the same objects (Named). New returns a
// private store that no URL reaches. There are no buckets to miss: every name exists, and
// MakeBucket succeeds.
//
// # Errors
//
// A missing key is store.ErrNotExist; a failed condition (IfNoneMatch on an existing key,
// IfMatch on a missing key or a stale ETag, for Put, Copy, Delete and a pinned Get) is
// store.ErrPreconditionFailed. A Put whose body cannot be read is store.ErrUnavailable, unless
// the body's error already carries a store kind, which passes through. A cancelled context
// returns the context's error.
package mem
