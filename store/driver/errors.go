package driver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/wharfdata/wharf/errcode"
)

const (
	sectionObjects = "Objects and buckets"
	sectionURLs    = "Store URLs, endpoints and credentials"
)

// The kinds of store failures. Each is an *errcode.Code: test for it with errors.Is.
var (
	ErrNotExist = errcode.New(errcode.Def{Name: "WHARF_NOT_FOUND", Text: "object does not exist",
		Exit: errcode.ExitFailed, Class: errcode.Poison, Section: sectionObjects,
		Meaning: "No object at the key (or no local file at the path). The message names the key.",
		Remedy:  "Check the key with `wharf ls`; keys are case-sensitive and taken byte for byte."})
	ErrBucketMissing = errcode.New(errcode.Def{Name: "WHARF_BUCKET_MISSING", Text: "bucket does not exist",
		Exit: errcode.ExitFailed, Class: errcode.Operator, Section: sectionObjects,
		Meaning: "The bucket, container or local directory itself does not exist. wharf never treats it as empty. The message names it.",
		Remedy:  "Check the bucket name and endpoint; create it with `wharf mb URL` (the bucket alone, such as `wharf mb s3://bucket`) if it should exist."})
	ErrBucketNotEmpty = errcode.New(errcode.Def{Name: "WHARF_BUCKET_NOT_EMPTY", Text: "bucket is not empty",
		Exit: errcode.ExitFailed, Class: errcode.Operator, Section: sectionObjects,
		Meaning: "`wharf rb` removes only an empty bucket, container or directory, and this one holds objects (on S3, objects, object versions or delete markers of a versioned bucket). Nothing was removed. The message names it.",
		Remedy:  "See what it holds with `wharf ls -r URL`; `wharf rb --force URL` removes every object (and aborts every incomplete upload) first, then the bucket. A versioned S3 bucket's old versions are the store's own tools' to remove."})
	ErrPreconditionFailed = errcode.New(errcode.Def{Name: "WHARF_PRECONDITION_FAILED", Text: "precondition failed",
		Exit: errcode.ExitFailed, Class: errcode.Poison, Section: sectionObjects,
		Meaning: "A conditional write or read did not hold: `cp --if-absent` onto an existing object, a stale ETag on replace or delete, a pinned read of an object that changed.",
		Remedy:  "Another writer got there first. Re-read the object and decide; do not retry blindly."})
	ErrChecksumMismatch = errcode.New(errcode.Def{Name: "WHARF_CHECKSUM_MISMATCH", Text: "checksum mismatch",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: sectionObjects,
		Meaning: "The bytes read or written are not the bytes the store or the source vouched for: their CRC-32C differs from the one the object carries (a download, a copy between stores), or the store computed another than the one sent (an upload). Nothing is left at the destination: no file renamed into place, no object committed.",
		Remedy:  "Copy it again; a mismatch that repeats names a store, disk or network path that damages data, which the message's object and figures help find."})
	ErrForbidden = errcode.New(errcode.Def{Name: "WHARF_FORBIDDEN", Text: "access denied",
		Exit: errcode.ExitFailed, Class: errcode.Operator, Section: sectionObjects,
		Meaning: "The store refused access (HTTP 403, invalid or missing credentials, bad signature), or a local permission error.",
		Remedy:  "Check the credentials the AWS SDK chain finds (`AWS_ACCESS_KEY_ID`, `AWS_PROFILE`…) and the bucket policy. On Azure, check the account key or the SAS token: its permissions, and its expiry (the message says when a SAS token expired). On Google Cloud Storage, check the service-account key or the application default credentials (`GOOGLE_APPLICATION_CREDENTIALS`, `gcloud auth application-default login`) and the bucket's IAM roles; the message says when no credentials were found or a token was refused."})
	ErrClockSkewed = errcode.New(errcode.Def{Name: "WHARF_CLOCK_SKEWED", Text: "the store refused the request's time: this machine's clock is too far from the store's",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: sectionObjects,
		Meaning: "The store refused a request because the time it was signed with is too far from the store's own clock (S3 `RequestTimeTooSkewed`: MinIO and AWS allow 15 minutes). A clock problem, not a credential one: nothing was done. The message gives both times and the skew between them when the store's answer carried its time (its `Date`). The AWS SDK measures the skew from each answer and signs the next request with it, so a retry may pass: `wharf ship` retries such a failure and stays healthy, `wharf backfill` reads the object again (reason `unreadable`).",
		Remedy:  "Sync this machine's clock (NTP: `chronyc tracking`, `timedatectl`), or the store's. `wharf probe URL` reports the skew once requests pass."})
	ErrUnsupported = errcode.New(errcode.Def{Name: "WHARF_UNSUPPORTED", Text: "not supported by this store",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Section: sectionObjects,
		Meaning: "The store cannot do this: `mb` on standard output, a server answering 501, a key that collides with a directory in a file store.",
		Remedy:  "Use a store that supports the operation, or another key."})
	ErrUnavailable = errcode.New(errcode.Def{Name: "WHARF_UNAVAILABLE", Text: "store unavailable",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: sectionObjects,
		Meaning: "The store did not answer after the retry policy was spent (transport faults, throttling, 5xx). The message names the request and the number of attempts; it claims nothing about the content.",
		Remedy:  "Check connectivity and the endpoint; run again later."})
	ErrOutcomeUnknown = errcode.New(errcode.Def{Name: "WHARF_OUTCOME_UNKNOWN", Text: "outcome unknown: the answer to a conditional write was lost",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: sectionObjects,
		Meaning: "The answer to a conditional write was lost: it may or may not have landed. wharf never resends a conditional write.",
		Remedy:  "Check with `wharf stat`: an object carrying the write's `wharf-put-id` metadata means it landed."})
	ErrKeyInvalid = errcode.New(errcode.Def{Name: "WHARF_KEY_INVALID", Text: "invalid key",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Section: sectionObjects,
		Meaning: "The key is refused before any request: empty, a leading `/`, an empty, `.` or `..` segment, a control character other than a tab, over 1024 bytes, or a backslash in a key to write or delete (Azure and SeaweedFS take it for `/`); or the URL names a bucket, a prefix or a directory where an object is needed (`wharf cat s3://bucket/`).",
		Remedy:  "Fix the URL. wharf never writes outside a store's root."})
)

// The kinds of configuration failures, found when a URL is parsed or a store's options are
// checked, before any connection.
var (
	ErrEndpointUnsupported = errcode.New(errcode.Def{Name: "WHARF_ENDPOINT_UNSUPPORTED", Text: "unsupported store URL",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Section: sectionURLs,
		Meaning: "The URL's scheme has no backend (`ftp://…`) and names no store of the config file, or the endpoint is not an `http(s)://host` URL. The message names the scheme.",
		Remedy:  "Use one of the schemes in [cli.md](cli.md#store-urls), or name a store defined under `stores:` in the config file."})
	ErrEndpointInsecure = errcode.New(errcode.Def{Name: "WHARF_ENDPOINT_INSECURE", Text: "plaintext endpoint on a non-loopback host",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Section: sectionURLs,
		Meaning: "A plaintext `http://` endpoint on a host that is not loopback (including a GCS emulator named by `STORAGE_EMULATOR_HOST`). Requests and signatures would be readable and replayable on the path. The message names the host.",
		Remedy:  "Use `https://`; `http://` is accepted on 127.0.0.0/8, `::1` and `localhost` only."})
	ErrEndpointNotAllowed = errcode.New(errcode.Def{Name: "WHARF_ENDPOINT_NOT_ALLOWED", Text: "endpoint host not allowed",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Section: sectionURLs,
		Meaning: "`WHARF_ENDPOINT_ALLOWLIST` is set and the endpoint's host matches none of its patterns; or an export destination names a custom endpoint on a host that is not loopback and no allow-list admits it.",
		Remedy:  "Use an allowed endpoint, or add the host to `WHARF_ENDPOINT_ALLOWLIST` (or the config's `endpoint_allowlist`) if it is legitimate."})
	ErrCredentialLiteral = errcode.New(errcode.Def{Name: "WHARF_CREDENTIAL_LITERAL", Text: "credential given as a literal: give a reference (env://NAME or file:///path)",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Section: sectionURLs,
		Meaning: "A credential was given as a literal value, including `user:password@` in a store URL or in any endpoint (from a flag, the config file, `AWS_ENDPOINT_URL*` or an AWS profile). The value is redacted from the message.",
		Remedy:  "Give a reference: `env://NAME` or `file:///path`. For S3 you can also leave credentials out and let the AWS SDK chain find them."})
	ErrCredentialUnbound = errcode.New(errcode.Def{Name: "WHARF_CREDENTIAL_UNBOUND", Text: "credential reference does not resolve",
		Exit: errcode.ExitUsage, Class: errcode.Operator, Section: sectionURLs,
		Meaning: "A credential reference does not resolve: the variable is unset or the file missing; or only one of an access key pair was given. The message names the field and the variable or path, never a value.",
		Remedy:  "Set the variable or create the file."})
	ErrCredentialConflict = errcode.New(errcode.Def{Name: "WHARF_CREDENTIAL_CONFLICT", Text: "conflicting credentials",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Section: sectionURLs,
		Meaning: "Credentials that exclude each other: `anonymous` beside keys, `credentials: role` beside keys, an Azure account key beside a SAS token; Azure credentials in the environment (`AZURE_STORAGE_ACCOUNT`, a connection string's `AccountName`) for another account than the URL's.",
		Remedy:  "Give one way to authenticate."})
	ErrConfig = errcode.New(errcode.Def{Name: "WHARF_CONFIG_INVALID", Text: "invalid configuration",
		Exit: errcode.ExitUsage, Class: errcode.Fatal, Section: sectionURLs,
		Meaning: "A store option or the config file is invalid: an option the store's backend does not have (`--region` for a `file://` store), `anonymous: maybe`, a relative `file://` URL, a bucket name the store would refuse; an Azure account or container name Azure would refuse, an account key that is not base64, a SAS token or `AZURE_STORAGE_CONNECTION_STRING` that does not parse (named, never quoted), or no Azure credentials at all; a GCS `service_account_file` that is not a service-account JSON key (the message names the reference and the JSON field at fault, never the content), or `credentials: role` on a `gs://` URL. Or the config file (`wharf.yaml`) is unreadable, not YAML, has an unknown key, a value of the wrong type, an unset `${env:NAME}`, `${…}` in a credential field, two exports of one name. The message names the file, the line and the key.",
		Remedy:  "Fix the option or the file; each store's options are in [stores.md](stores.md), the config file's keys in [config.md](config.md)."})
	ErrNoCredentials = errcode.New(errcode.Def{Name: "WHARF_CREDENTIALS_MISSING", Text: "no credentials found",
		Exit: errcode.ExitUsage, Class: errcode.Operator, Section: sectionURLs,
		Meaning: "No credentials were given and none could be found where the store's own tools look: for S3, the environment (`AWS_ACCESS_KEY_ID`), the profile in the shared config and credentials files, web identity, the container endpoint and EC2 instance metadata. The message names each source tried and the last one's answer. wharf stops before sending a request without credentials.",
		Remedy:  "Give credentials (the environment, a profile, or references in the config file), or `--anonymous` for a public bucket."})
	ErrRoleUnavailable = errcode.New(errcode.Def{Name: "WHARF_ROLE_UNAVAILABLE", Text: "no workload-role credentials: no source answered",
		Exit: errcode.ExitFailed, Class: errcode.Operator, Section: sectionURLs,
		Meaning: "`credentials: role` was asked for and no workload-role source answered (ECS container endpoint, STS web identity, IMDSv2), or the keys it had expired and no source answered a refresh (still-valid keys are kept over a failed refresh; expired ones are never used). The message names each source tried and why.",
		Remedy:  "Run where a workload role is attached, or use keys."})
)

// SkewError is the cause of an ErrClockSkewed error: the store's time, as its answer gave it
// (zero when the answer had none), and the time the request was signed with.
type SkewError struct {
	Store, Signed time.Time
	Err           error // the store's answer
}

// Skew is the store's clock less the signing clock (as probe.Result.ClockSkewSeconds), or 0
// when either time is unknown.
func (e *SkewError) Skew() time.Duration {
	if e.Store.IsZero() || e.Signed.IsZero() {
		return 0
	}
	return e.Store.Sub(e.Signed)
}

func (e *SkewError) Error() string {
	var b strings.Builder
	if d := e.Skew(); d != 0 {
		side := "behind"
		if d < 0 {
			side, d = "ahead of", -d
		}
		fmt.Fprintf(&b, "the request was signed at %s by this machine's clock and the store's answered at %s: this clock is %s %s the store's; sync it (NTP)",
			e.Signed.UTC().Format(time.RFC3339), e.Store.UTC().Format(time.RFC3339), d.Round(time.Second), side)
	} else {
		b.WriteString("this machine's clock and the store's are too far apart (the answer did not say by how much); sync it (NTP)")
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

func (e *SkewError) Unwrap() error { return e.Err }

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
	Op   string        // "get", "head", "put", "delete", "list", "copy", "make-bucket"
	Key  string        // the key, the prefix of a listing, or the bucket
	Kind *errcode.Code // one of the Err… kinds
	Err  error         // the cause; may be nil
	// Status is the HTTP status when the store answered one; Reason the store's own error
	// code ("NoSuchBucket", "BlobAlreadyExists") when known.
	Status int
	Reason string
	Fault  Fault
	// Attempts is how many requests were made, when the retry policy gave up or a definitive
	// answer came to a resend.
	Attempts int
	// PutID is the wharf-put-id a put carried; with ErrOutcomeUnknown, pass it to
	// store.ResolvePut.
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
	if e.Reason != "" {
		detail = append(detail, e.Reason)
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
func NewError(op, key string, kind *errcode.Code, cause error) *Error {
	return &Error{Op: op, Key: key, Kind: kind, Err: cause}
}

// MapError is the frame of every backend's one mapping from SDK errors to store errors: nil
// stays nil; once ctx is done its error passes through unwrapped (a cancel is never a kind);
// an *Error already made (by a body, a credential source or a transport of wharf's) is
// returned as it is, out of any SDK wrapping; anything
// else is what toStore makes of it. While ctx is alive a context error is an attempt's own
// timeout, which toStore reports as a transport fault.
func MapError(ctx context.Context, err error, toStore func(error) error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var e *Error
	if errors.As(err, &e) {
		return e // the store error itself, not an SDK's wrapping of it
	}
	return toStore(err)
}

// MissingObject is the kind of a "no such object" answer: a failed condition when the request
// carried If-Match (the object it was pinned to is gone), else ErrNotExist.
func MissingObject(ifMatch bool) (*errcode.Code, Fault) {
	if ifMatch {
		return ErrPreconditionFailed, FaultNone
	}
	return ErrNotExist, FaultNone
}

// ClassifyStatus maps an HTTP status that came with no more telling error code to a kind and a
// fault, alike for every HTTP store. A 404 is ErrNotExist when objectRead (a read of an object
// whose answer names no missing bucket), else ErrBucketMissing; 412 and 409 are a failed
// condition; 401 and 403 forbidden; 501 and 405 unsupported; 408 a transport fault; 429 and
// other 5xx throttling; anything else unsupported.
func ClassifyStatus(status int, objectRead bool) (*errcode.Code, Fault) {
	switch {
	case status == http.StatusNotFound && objectRead:
		return ErrNotExist, FaultNone
	case status == http.StatusNotFound:
		return ErrBucketMissing, FaultNone
	case status == http.StatusPreconditionFailed || status == http.StatusConflict:
		return ErrPreconditionFailed, FaultNone
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ErrForbidden, FaultNone
	case status == http.StatusNotImplemented || status == http.StatusMethodNotAllowed:
		return ErrUnsupported, FaultNone
	case status == http.StatusRequestTimeout:
		return ErrUnavailable, FaultTransport
	case status == http.StatusTooManyRequests || status >= 500:
		return ErrUnavailable, FaultThrottled
	}
	return ErrUnsupported, FaultNone
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
