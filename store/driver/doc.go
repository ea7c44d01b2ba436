// Package driver is what a store backend implements and uses: the Bucket interface and its
// optional capabilities, the types of the store contract, the error kinds and the one error
// type, the retry policy a backend applies to the requests it makes itself, the HTTP client
// every backend sends through, and the registry where a backend announces its URL scheme.
//
// Callers do not use this package: they hold the portable *store.Store, which wraps a Bucket
// and does, once for every backend, what no backend repeats — key validation, the prefix of
// a store opened below its root, the retry policy and the resumption of broken reads, and the
// fallbacks where a capability is missing (a copy streamed through Get and Put, a batch
// delete done as single deletes, 16 at a time).
//
// # Adding a backend
//
// A backend is a package under store/ that, in its init, calls Register with a Backend (its
// URL scheme, and a Parse that splits what follows scheme:// into the store's root and the
// key, byte for byte; BucketURL and AccountURL make the usual ones) and its constructor, whose
// options type (a struct with yaml tags, defaults, FromEnv for the store's own conventional
// environment, and Check) Register reads off its signature. It maps its SDK's errors to the
// kinds in one function framed by MapError, turns the SDK's retries off, and sends through
// NewHTTPClient. Its test runs the conformance suite (store/storetest) in a few
// lines. Only cmd/wharf imports backends (cmd/wharf/backends.go).
//
// # Errors
//
// Every failure is an *Error carrying the operation and key that unwraps to exactly one kind
// (ErrNotExist, ErrPreconditionFailed, ErrBucketMissing, ErrForbidden, ErrUnsupported,
// ErrUnavailable, ErrOutcomeUnknown, ErrKeyInvalid; the configuration kinds when a URL or an
// option is refused). Each kind is an *errcode.Code with its WHARF_… name, its exit status and
// its docs/errors.md row. A cancelled context passes through as the context's own error.
package driver
