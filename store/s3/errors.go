package s3

import (
	"context"
	"errors"
	"fmt"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/wharfdata/wharf/store"
)

// call names the request an error came from, for the mapping.
type call struct {
	op  string // "get", "head", "put", "delete", "list", "copy", "make-bucket"
	key string
	// ifMatch is set for a put (or multipart commit) carrying If-Match: S3 answers such a
	// put on a missing key with 404 NoSuchKey, which is a failed condition.
	ifMatch bool
}

// mapError is the one place SDK errors become store errors. A context error passes through
// unwrapped when the caller's ctx is done; while ctx is alive it is an attempt's own timeout,
// a transport fault. It never puts a credential in the error: the SDK's messages hold the
// operation, status, code and request id, not the keys.
func mapError(ctx context.Context, c call, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	e := &store.Error{Op: c.op, Key: c.key, Err: err}
	var api smithy.APIError
	if errors.As(err, &api) {
		e.Code = api.ErrorCode()
	}
	var resp interface{ HTTPStatusCode() int }
	if errors.As(err, &resp) {
		e.Status = resp.HTTPStatusCode()
	}
	switch {
	case e.Status != 0 || e.Code != "":
		e.Kind, e.Fault = classify(c, e.Status, e.Code)
	case isRoleError(err):
		e.Kind = store.ErrRoleUnavailable
	case isSigningError(err):
		e.Kind = store.ErrForbidden
		e.Err = fmt.Errorf("no credentials to sign %s with: %w", c.op, err)
	case store.IsTransport(err) || store.IsContext(err) || isSendError(err):
		e.Kind, e.Fault = store.ErrUnavailable, store.FaultTransport
	default:
		e.Kind = store.ErrUnavailable
	}
	return e
}

// classify maps an S3 error code and HTTP status to a kind and fault. Codes win over
// statuses; a HEAD answer has no code, only a status.
func classify(c call, status int, code string) (*store.Kind, store.Fault) {
	switch code {
	case "NoSuchKey":
		if c.ifMatch {
			return store.ErrPreconditionFailed, store.FaultNone
		}
		return store.ErrNotExist, store.FaultNone
	case "NoSuchBucket":
		return store.ErrBucketMissing, store.FaultNone
	case "NoSuchUpload":
		return store.ErrNotExist, store.FaultNone
	case "PreconditionFailed", "ConditionalRequestConflict":
		return store.ErrPreconditionFailed, store.FaultNone
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled",
		"InvalidToken", "ExpiredToken", "AccountProblem", "BucketAlreadyExists":
		return store.ErrForbidden, store.FaultNone
	case "NotImplemented", "MethodNotAllowed":
		return store.ErrUnsupported, store.FaultNone
	case "SlowDown", "ServiceUnavailable", "InternalError", "Throttling", "TooManyRequests",
		"RequestLimitExceeded", "XMinioServerNotInitialized":
		return store.ErrUnavailable, store.FaultThrottled
	case "RequestTimeout", "IncompleteBody":
		return store.ErrUnavailable, store.FaultTransport
	}
	return classifyStatus(c, status, code)
}

func classifyStatus(c call, status int, code string) (*store.Kind, store.Fault) {
	switch {
	case status == 404 && (code == "" || code == "NotFound") && (c.op == "head" || c.op == "get"):
		// A HEAD answer has no code: Get and Head ask whether the bucket is there.
		return store.ErrNotExist, store.FaultNone
	case status == 404:
		return store.ErrBucketMissing, store.FaultNone
	case status == 412 || status == 409:
		return store.ErrPreconditionFailed, store.FaultNone
	case status == 401 || status == 403:
		return store.ErrForbidden, store.FaultNone
	case status == 501 || status == 405:
		return store.ErrUnsupported, store.FaultNone
	case status == 408: // a request timeout with no S3 code (a proxy's), as GCS and Azure map it
		return store.ErrUnavailable, store.FaultTransport
	case status == 429 || status >= 500:
		return store.ErrUnavailable, store.FaultThrottled
	}
	return store.ErrUnsupported, store.FaultNone
}

func isSigningError(err error) bool {
	var se *v4.SigningError
	return errors.As(err, &se)
}

func isSendError(err error) bool {
	var se *smithyhttp.RequestSendError
	return errors.As(err, &se)
}
