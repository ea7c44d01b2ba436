package store

import (
	"github.com/wharfdata/wharf/internal/secret"
	"github.com/wharfdata/wharf/store/driver"
)

// The types of the store contract, defined in package driver (which backends implement) and
// named here for callers.
type (
	ObjectInfo    = driver.ObjectInfo
	Object        = driver.Object
	Headers       = driver.Headers
	Encryption    = driver.Encryption
	BucketInfo    = driver.BucketInfo
	GetOptions    = driver.GetOptions
	PutOptions    = driver.PutOptions
	DeleteOptions = driver.DeleteOptions
	ListOptions   = driver.ListOptions
	Page          = driver.Page
	Description   = driver.Description
	Location      = driver.Location
	Error         = driver.Error
	SkewError     = driver.SkewError // the cause of an ErrClockSkewed error: both clocks
	RetryPolicy   = driver.RetryPolicy
)

// The error kinds a store call fails with; each is an *errcode.Code (see package driver).
var (
	ErrNotExist           = driver.ErrNotExist
	ErrPreconditionFailed = driver.ErrPreconditionFailed
	ErrChecksumMismatch   = driver.ErrChecksumMismatch
	ErrBucketMissing      = driver.ErrBucketMissing
	ErrBucketNotEmpty     = driver.ErrBucketNotEmpty
	ErrForbidden          = driver.ErrForbidden
	ErrClockSkewed        = driver.ErrClockSkewed
	ErrUnsupported        = driver.ErrUnsupported
	ErrUnavailable        = driver.ErrUnavailable
	ErrOutcomeUnknown     = driver.ErrOutcomeUnknown
	ErrKeyInvalid         = driver.ErrKeyInvalid
	ErrConfig             = driver.ErrConfig
)

// Metadata keys that wharf itself writes.
const (
	MetaPutID  = driver.MetaPutID  // random per conditional put, to resolve ErrOutcomeUnknown
	MetaSHA256 = driver.MetaSHA256 // hex sha256 of the body, where the writer knows it
	MetaCRC32C = driver.MetaCRC32C // the CRC-32C of the body, where the store keeps none
)

// DefaultRetryPolicy returns the retry policy of DESIGN.md (see driver.DefaultRetryPolicy).
func DefaultRetryPolicy() *RetryPolicy { return driver.DefaultRetryPolicy() }

// ParseURL parses a store URL: everything after the bucket is the key, byte for byte. It
// only parses: no credential is read, no connection made.
func ParseURL(raw string) (Location, error) { return driver.ParseURL(raw) }

// IsContext reports whether err is a context cancellation or deadline. Such errors pass
// through every layer unwrapped.
func IsContext(err error) bool { return driver.IsContext(err) }

// ValidateKey checks a key as every Store does before a backend sees it (see
// driver.ValidateKey): ErrKeyInvalid naming op and key, or nil.
func ValidateKey(op, key string) error { return driver.ValidateKey(op, key) }

// The kinds of a credential reference that does not resolve, for callers that resolve their
// own (a database password).
var (
	ErrCredentialLiteral = driver.ErrCredentialLiteral
	ErrCredentialUnbound = driver.ErrCredentialUnbound
)

// ResolveRef reads the credential reference ref (env://NAME, read with getenv, or
// file:///path) given for field: ErrCredentialLiteral for a literal, ErrCredentialUnbound for
// a variable that is unset or a file that cannot be read, naming the field, never a value.
func ResolveRef(field, ref string, getenv func(string) string) (secret.Value, error) {
	return (&driver.Common{Getenv: getenv}).Resolve(field, ref)
}
