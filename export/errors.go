package export

import (
	"errors"
	"fmt"

	"github.com/wharfdata/wharf/store"
)

// Kind is an error kind: a sentinel to test for with errors.Is, carrying a stable WHARF_…
// code that store.Code finds.
type Kind = store.Kind

func newKind(code, text string) *Kind { return store.NewKind(code, text) }

// The kinds of export failures.
var (
	// ErrConfig: an Export's options are invalid (no source, both table and query…).
	ErrConfig = newKind("WHARF_EXPORT_CONFIG_INVALID", "invalid export options")
	// ErrSourceUnavailable: the source cannot be opened or reached, or refused the login.
	// The message names the host or file, never a password.
	ErrSourceUnavailable = newKind("WHARF_SOURCE_UNAVAILABLE", "source unavailable")
	// ErrSourceNotFound: the table, or a column the export names, does not exist.
	ErrSourceNotFound = newKind("WHARF_SOURCE_NOT_FOUND", "table or column not found")
	// ErrChunkKey: the chunking key (or cursor column) is not an integer or timestamp column.
	ErrChunkKey = newKind("WHARF_CHUNK_KEY_INVALID", "chunking key must be an integer or timestamp column")
	// ErrSourceRead: the source failed while a chunk was read, or a value did not convert.
	ErrSourceRead = newKind("WHARF_SOURCE_READ_FAILED", "reading the source failed")
	// ErrDestAlreadyComplete: --resume on a prefix that holds _SUCCESS, when the journal's last
	// run of the export did not fail and Force is not set.
	ErrDestAlreadyComplete = newKind("WHARF_DEST_ALREADY_COMPLETE", "destination already holds a complete export")
	// ErrVerifyManifestRead: validate could not read the prefix (a missing bucket, no access,
	// the store unavailable). Never reported as a legacy run.
	ErrVerifyManifestRead = newKind("WHARF_VERIFY_MANIFEST_READ_ERROR", "cannot read the manifest")
	// ErrNotCertified: validate read the prefix and it is not a certified export.
	ErrNotCertified = newKind("WHARF_NOT_CERTIFIED", "prefix is not a certified export")
	// ErrState: the state file (journal, chunk progress, cursors) cannot be opened or written.
	ErrState = newKind("WHARF_STATE_ERROR", "state file error")
	// ErrWrite: writing a part, the manifest or _SUCCESS failed (the store error is wrapped too).
	ErrWrite = newKind("WHARF_EXPORT_WRITE_FAILED", "writing the export failed")
	// ErrValueRefused: a source value cannot be written exactly as its column's type (text
	// that is not UTF-8, a timestamp whose unit is not stated, a number that does not fit its
	// decimal, an infinite date…). The message names the table, the column, the row's chunk
	// key and the value; errors.As finds a *ValueError with the reason.
	ErrValueRefused = newKind("WHARF_EXPORT_VALUE_REFUSED", "a value cannot be written exactly")
	// ErrSchemaChanged: a resumed run's source columns are not those the interrupted run
	// wrote its parts with (a column added, dropped or retyped since).
	ErrSchemaChanged = newKind("WHARF_EXPORT_SCHEMA_CHANGED", "the source's columns changed during the run")
)

// The reasons a value is refused: a *ValueError unwraps to one of them.
var (
	ErrNotUTF8    = errors.New("not valid UTF-8")
	ErrInexact    = errors.New("does not fit the column's type exactly")
	ErrNoTimeUnit = errors.New("a number in a date or timestamp column needs its unit in time_units")
	ErrBadTime    = errors.New("not an ISO-8601 date or timestamp")
	ErrOutOfRange = errors.New("out of the column type's range")
	ErrInfinite   = errors.New("infinite date or timestamp (see the infinity option)")
	ErrWrongType  = errors.New("not a value of the column's type")
	ErrBadValue   = errors.New("malformed value")
)

// ValueError is a value refused by name: the column, the row (its chunk key) and the value.
type ValueError struct {
	Column string // the column's name
	Row    string // the row's chunk key, as text ("NULL" for the NULL-key chunk)
	Value  string // the value, quoted or in hex, shortened when long
	Reason error  // one of ErrNotUTF8, ErrInexact, ErrNoTimeUnit, …
	Detail string // what exactly, when the reason alone does not say
}

func (e *ValueError) Error() string {
	s := fmt.Sprintf("column %q, row with key %s: value %s: %v", e.Column, e.Row, e.Value, e.Reason)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the reason.
func (e *ValueError) Unwrap() error { return e.Reason }

// Error is an export failure: what was being done, on what, the kind and the cause. It unwraps
// to both the kind and the cause (a store error keeps its own kind reachable).
type Error struct {
	Op   string // "open-source", "schema", "plan", "read", "write", "manifest", "validate", "state"
	What string // the table, column, host, key or file concerned
	Kind *Kind
	Err  error
}

func (e *Error) Error() string {
	s := e.Op
	if e.What != "" {
		s += " " + e.What
	}
	s += ": " + e.Kind.Error()
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

func newErr(op, what string, kind *Kind, cause error) error {
	return &Error{Op: op, What: what, Kind: kind, Err: cause}
}

// ConfigError reports whether err is a configuration error: one that running again unchanged
// meets again, found before anything was attempted (the CLI's exit 2). A run that ends with one
// is not journaled and writes nothing at the prefix: an export's invalid options or chunk key,
// a store URL or credential refused before any connection.
func ConfigError(err error) bool {
	if err == nil {
		return false
	}
	for _, k := range []error{ErrConfig, ErrChunkKey, store.ErrConfig, store.ErrKeyInvalid, store.ErrEndpointUnsupported,
		store.ErrEndpointInsecure, store.ErrEndpointNotAllowed, store.ErrCredentialLiteral, store.ErrCredentialUnbound,
		store.ErrCredentialConflict} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// Code returns the code of the first export kind in err's chain, or "".
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind.Code()
	}
	return ""
}
