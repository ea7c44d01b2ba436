package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Kind is an error kind. Kinds are sentinels: test for them with errors.Is. Each has a stable
// code that the CLI prints and docs/errors.md documents.
type Kind struct {
	code string
	text string
}

func (k *Kind) Error() string { return k.text }

// Code is the stable WHARF_… code of the kind.
func (k *Kind) Code() string { return k.code }

func newKind(code, text string) *Kind { return &Kind{code: code, text: text} }

// NewKind returns a new error kind with a stable WHARF_… code, for the packages above the
// store layer (the jobs) to define their own sentinels; Code finds it like the store's.
func NewKind(code, text string) *Kind { return newKind(code, text) }

// The kinds of store failures.
var (
	ErrNotExist           = newKind("WHARF_NOT_FOUND", "object does not exist")
	ErrPreconditionFailed = newKind("WHARF_PRECONDITION_FAILED", "precondition failed")
	ErrBucketMissing      = newKind("WHARF_BUCKET_MISSING", "bucket does not exist")
	ErrForbidden          = newKind("WHARF_FORBIDDEN", "access denied")
	ErrUnsupported        = newKind("WHARF_UNSUPPORTED", "not supported by this store")
	ErrUnavailable        = newKind("WHARF_UNAVAILABLE", "store unavailable")
	ErrOutcomeUnknown     = newKind("WHARF_OUTCOME_UNKNOWN", "outcome unknown: the answer to a conditional write was lost")
	ErrKeyInvalid         = newKind("WHARF_KEY_INVALID", "invalid key")
)

// The kinds of configuration failures, found when a URL is parsed and before any connection.
var (
	ErrEndpointUnsupported = newKind("WHARF_ENDPOINT_UNSUPPORTED", "unsupported store URL")
	ErrEndpointInsecure    = newKind("WHARF_ENDPOINT_INSECURE", "plaintext endpoint on a non-loopback host")
	ErrEndpointNotAllowed  = newKind("WHARF_ENDPOINT_NOT_ALLOWED", "endpoint host not in WHARF_ENDPOINT_ALLOWLIST")
	ErrCredentialLiteral   = newKind("WHARF_CREDENTIAL_LITERAL", "credential given as a literal: give a reference (env://NAME or file:///path)")
	ErrCredentialUnbound   = newKind("WHARF_CREDENTIAL_UNBOUND", "credential reference does not resolve")
	ErrCredentialConflict  = newKind("WHARF_CREDENTIAL_CONFLICT", "conflicting credentials")
	ErrConfig              = newKind("WHARF_CONFIG_INVALID", "invalid store configuration")
	ErrRoleUnavailable     = newKind("WHARF_ROLE_UNAVAILABLE", "no workload-role credentials: no source answered")
)

// The kinds the probe reports.
var (
	ErrProbeInconclusive    = newKind("WHARF_PROBE_INCONCLUSIVE", "probe inconclusive")
	ErrCoordinationUnproven = newKind("WHARF_COORDINATION_UNPROVEN", "store not proven to enforce conditional writes")
)

// Fault says whether a failure is transient and how. The retry policy decides from it; an
// error that leaves the policy has Fault None.
type Fault int

const (
	FaultNone      Fault = iota // definitive answer: never retried
	FaultTransport              // connection reset, timeout, incomplete body
	FaultThrottled              // 429, 503, or 500
)

// Error is a store failure: the operation, the key, the kind and the cause. It unwraps to both
// Kind and Err, so errors.Is works for the kind and for the underlying cause.
type Error struct {
	Op     string // "get", "head", "put", "delete", "list", "copy", "make-bucket"
	Key    string // the key, the prefix of a listing, or the bucket
	Kind   error  // one of the Err… kinds
	Err    error  // the cause; may be nil
	Status int    // HTTP status when the store answered one
	Code   string // the store's own error code ("NoSuchBucket") when known
	Fault  Fault
	// Attempts is how many requests were made, when the retry policy gave up.
	Attempts int
	// PutID is the wharf-put-id a conditional put carried; with ErrOutcomeUnknown, pass it
	// to ResolvePut.
	PutID string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Key != "" {
		fmt.Fprintf(&b, " %q", e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Kind.Error())
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	var detail []string
	if e.Status != 0 {
		detail = append(detail, fmt.Sprintf("HTTP %d", e.Status))
	}
	if e.Code != "" {
		detail = append(detail, e.Code)
	}
	if len(detail) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(detail, " "))
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// NewError returns an *Error of kind for op on key, wrapping cause.
func NewError(op, key string, kind error, cause error) *Error {
	return &Error{Op: op, Key: key, Kind: kind, Err: cause}
}

// Code returns the WHARF_… code of the first kind found in err's chain, or "" if none.
func Code(err error) string {
	var c interface{ Code() string }
	if errors.As(err, &c) {
		return c.Code()
	}
	return ""
}

// FaultOf returns the fault of the first *Error in err's chain, or FaultNone.
func FaultOf(err error) Fault {
	var e *Error
	if errors.As(err, &e) {
		return e.Fault
	}
	return FaultNone
}

// BodyError is what a backend's Put returns when the caller's body fails while it is read
// (the body, not the store): the context's error once ctx has ended, a cancellation or a
// store error as it is (a body read from another store names its own key and kind), anything
// else ErrUnavailable naming the key and wrapping the body's error.
func BodyError(ctx context.Context, op, key string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var se *Error
	if IsContext(err) || errors.As(err, &se) {
		return err
	}
	return &Error{Op: op, Key: key, Kind: ErrUnavailable, Err: fmt.Errorf("reading the body: %w", err)}
}

// WithoutFault returns err with its fault cleared: for an error leaving a multipart or block
// upload, each request of which the retry policy already retried, so that the whole object
// is not sent again.
func WithoutFault(err error) error {
	var e *Error
	if errors.As(err, &e) && e.Fault != FaultNone {
		c := *e
		c.Fault = FaultNone
		return &c
	}
	return err
}

// IsContext reports whether err is a context cancellation or deadline. Such errors pass
// through every layer unwrapped.
func IsContext(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
