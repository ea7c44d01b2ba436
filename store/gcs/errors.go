package gcs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/wharfdata/wharf/store/driver"
)

// call names the request an error came from, for the mapping.
type call struct {
	op  string // "get", "head", "put", "delete", "list", "copy", "make-bucket"
	key string
}

// mapError is the one place SDK errors become store errors (see driver.MapError).
func mapError(ctx context.Context, c call, err error) error {
	return driver.MapError(ctx, err, c.storeError)
}

// storeError makes an SDK error a store error. A 404 is ErrNotExist here: the callers that
// can meet a missing bucket (notFound) ask the bucket before they say so. The SDK's messages
// hold the operation, status, reason and the server's message, never a credential.
func (c call) storeError(err error) error {
	e := &driver.Error{Op: c.op, Key: c.key, Err: err}
	var api *googleapi.Error
	if errors.As(err, &api) {
		e.Status, e.Reason = api.Code, reason(api)
	}
	var ce *credentialsError
	switch {
	case errors.As(err, &ce):
		// Forbidden, unless the token endpoint could not be reached (a request of its own
		// failed in transport: a file that cannot be read is no transport fault).
		e.Kind = driver.ErrForbidden
		var ue *url.Error
		if errors.As(ce.err, &ue) && driver.IsTransport(ue.Err) {
			e.Kind, e.Fault = driver.ErrUnavailable, driver.FaultTransport
		}
	case errors.Is(err, storage.ErrBucketNotExist):
		e.Kind, e.Status, e.Reason = driver.ErrBucketMissing, http.StatusNotFound, orCode(e.Reason, "notFound")
	case errors.Is(err, storage.ErrObjectNotExist):
		e.Kind, e.Status, e.Reason = driver.ErrNotExist, http.StatusNotFound, orCode(e.Reason, "notFound")
	case e.Status != 0:
		e.Kind, e.Fault = driver.ClassifyStatus(e.Status, true)
	case errors.Is(err, errReopen), driver.IsTransport(err), driver.IsContext(err):
		e.Kind, e.Fault = driver.ErrUnavailable, driver.FaultTransport
	default:
		e.Kind = driver.ErrUnavailable
	}
	return e
}

// xmlCode finds the error code in an XML API answer ("<Code>PreconditionFailed</Code>").
var xmlCode = regexp.MustCompile(`<Code>([A-Za-z]+)</Code>`)

// reason returns GCS's reason for err ("conditionNotMet", "notFound", "rateLimitExceeded"),
// or the XML API's code.
func reason(api *googleapi.Error) string {
	for _, it := range api.Errors {
		if it.Reason != "" {
			return it.Reason
		}
	}
	if m := xmlCode.FindStringSubmatch(api.Body); m != nil {
		return m[1]
	}
	return ""
}

func orCode(code, fallback string) string {
	if code != "" {
		return code
	}
	return fallback
}

// kindOf returns the kind of a mapped error, or nil.
func kindOf(err error) error {
	var e *driver.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return nil
}

// bucketMissing returns an ErrBucketMissing for op on key that names the bucket, wrapping the
// SDK's error (never a mapped ErrNotExist).
func (b *Bucket) bucketMissing(op, key string, cause error) *driver.Error {
	return &driver.Error{Op: op, Key: key, Kind: driver.ErrBucketMissing, Status: http.StatusNotFound, Reason: "notFound",
		Err: fmt.Errorf("bucket %s does not exist (create it with wharf mb): %w", b.name, cause)}
}

// notFound turns a mapped ErrNotExist into ErrBucketMissing, naming the bucket, when the
// bucket itself is absent: GCS answers 404 for a missing object and a missing bucket alike. When the bucket's state
// cannot be learned (no storage.buckets.get permission, say), the error stays as it was.
func (b *Bucket) notFound(ctx context.Context, c call, mapped error) error {
	var e *driver.Error
	switch {
	case !errors.As(mapped, &e):
		return mapped
	case e.Kind == driver.ErrBucketMissing: // the SDK said so (a listing): name the bucket
		return b.bucketMissing(c.op, c.key, e.Err)
	case e.Kind != driver.ErrNotExist:
		return mapped
	}
	exists, err := b.bucketExists(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err == nil && !exists:
		return b.bucketMissing(c.op, c.key, e.Err)
	}
	return mapped
}

// bucketExists asks for the bucket's metadata: false when GCS says it does not exist; an error
// when it cannot tell.
func (b *Bucket) bucketExists(ctx context.Context) (bool, error) {
	_, err := b.bucket.Attrs(ctx)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, storage.ErrBucketNotExist):
		return false, nil
	}
	return false, err
}
