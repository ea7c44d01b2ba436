package s3

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store/driver"
)

// call names the request an error came from, for the mapping.
type call struct {
	op  string // "get", "head", "put", "delete", "list", "copy", "make-bucket"
	key string
	// ifMatch is set for a put (or multipart commit) carrying If-Match: S3 answers such a
	// put on a missing key with 404 NoSuchKey, which is a failed condition.
	ifMatch bool
}

// mapError is the one place SDK errors become store errors (see driver.MapError).
func mapError(ctx context.Context, c call, err error) error {
	return driver.MapError(ctx, err, c.storeError)
}

// storeError makes an SDK error a store error. It never puts a credential in it: the SDK's
// messages hold the operation, status, code and request id, not the keys.
func (c call) storeError(err error) error {
	e := &driver.Error{Op: c.op, Key: c.key, Err: err}
	var api smithy.APIError
	if errors.As(err, &api) {
		e.Reason = api.ErrorCode()
	}
	var resp interface{ HTTPStatusCode() int }
	if errors.As(err, &resp) {
		e.Status = resp.HTTPStatusCode()
	}
	switch {
	case e.Status != 0 || e.Reason != "":
		e.Kind, e.Fault = classify(c, e.Status, e.Reason)
		switch {
		case e.Kind == driver.ErrClockSkewed:
			e.Err = skewOf(err)
		case e.Kind == driver.ErrForbidden && (e.Reason == "" || e.Reason == "Forbidden"):
			// A HEAD answer has no body, so no RequestTimeTooSkewed: a refusal of a request
			// signed further from the store's clock than S3 allows is one all the same.
			if se := skewOf(err); se.Skew() > maxSkew || se.Skew() < -maxSkew {
				e.Kind, e.Err = driver.ErrClockSkewed, se
			}
		}
	case isRoleError(err):
		e.Kind = driver.ErrRoleUnavailable
	case isSigningError(err):
		e.Kind = driver.ErrForbidden
		e.Err = fmt.Errorf("no credentials to sign %s with: %w", c.op, err)
	case driver.IsTransport(err) || driver.IsContext(err) || isSendError(err):
		e.Kind, e.Fault = driver.ErrUnavailable, driver.FaultTransport
	default:
		e.Kind = driver.ErrUnavailable
	}
	return e
}

// classify maps an S3 error code and HTTP status to a kind and fault. Codes win over
// statuses; a HEAD answer has no code, only a status.
func classify(c call, status int, code string) (*errcode.Code, driver.Fault) {
	switch code {
	case "NoSuchKey":
		return driver.MissingObject(c.ifMatch)
	case "NoSuchBucket":
		return driver.ErrBucketMissing, driver.FaultNone
	case "NoSuchUpload":
		return driver.ErrNotExist, driver.FaultNone
	case "PreconditionFailed", "ConditionalRequestConflict":
		return driver.ErrPreconditionFailed, driver.FaultNone
	case "RequestTimeTooSkewed":
		// A clock, not a credential: the request was refused before it was looked at.
		return driver.ErrClockSkewed, driver.FaultNone
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled",
		"InvalidToken", "ExpiredToken", "AccountProblem", "BucketAlreadyExists":
		return driver.ErrForbidden, driver.FaultNone
	case "XAmzContentChecksumMismatch", "BadDigest":
		return driver.ErrChecksumMismatch, driver.FaultNone
	case "NotImplemented", "MethodNotAllowed":
		return driver.ErrUnsupported, driver.FaultNone
	case "SlowDown", "ServiceUnavailable", "InternalError", "Throttling", "TooManyRequests",
		"RequestLimitExceeded", "XMinioServerNotInitialized":
		return driver.ErrUnavailable, driver.FaultThrottled
	case "RequestTimeout", "IncompleteBody":
		return driver.ErrUnavailable, driver.FaultTransport
	}
	// A HEAD answer has no code: Get and Head ask whether the bucket is there.
	objectRead := (code == "" || code == "NotFound") && (c.op == "head" || c.op == "get")
	return driver.ClassifyStatus(status, objectRead)
}

// maxSkew is how far from its clock S3 (and MinIO) accept a request's signing time.
const maxSkew = 15 * time.Minute

// skewOf is the cause of a RequestTimeTooSkewed answer: the store's time from the answer's
// Date, the signing time from the request's X-Amz-Date.
func skewOf(err error) *driver.SkewError {
	e := &driver.SkewError{Err: err}
	var re *smithyhttp.ResponseError
	if !errors.As(err, &re) || re.Response == nil || re.Response.Response == nil {
		return e
	}
	resp := re.Response.Response
	if t, perr := http.ParseTime(resp.Header.Get("Date")); perr == nil {
		e.Store = t
	}
	if resp.Request != nil {
		if t, perr := time.Parse("20060102T150405Z", resp.Request.Header.Get("X-Amz-Date")); perr == nil {
			e.Signed = t
		}
	}
	return e
}

func isSigningError(err error) bool {
	var se *v4.SigningError
	return errors.As(err, &se)
}

func isSendError(err error) bool {
	var se *smithyhttp.RequestSendError
	return errors.As(err, &se)
}
