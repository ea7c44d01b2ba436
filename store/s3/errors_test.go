package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

// apiErr builds the error the SDK returns for an S3 answer with status and code.
func apiErr(op string, status int, code string) error {
	var inner error = &smithy.GenericAPIError{Code: code, Message: "test message"}
	resp := &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
			Err:      inner,
		},
		RequestID: "req-1",
	}
	return &smithy.OperationError{ServiceID: "S3", OperationName: op, Err: resp}
}

func TestMapError(t *testing.T) {
	cases := []struct {
		name   string
		c      call
		err    error
		kind   error
		fault  driver.Fault
		status int
	}{
		{"get NoSuchKey", call{op: "get"}, apiErr("GetObject", 404, "NoSuchKey"), store.ErrNotExist, driver.FaultNone, 404},
		{"get NoSuchBucket", call{op: "get"}, apiErr("GetObject", 404, "NoSuchBucket"), store.ErrBucketMissing, driver.FaultNone, 404},
		{"head 404", call{op: "head"}, apiErr("HeadObject", 404, "NotFound"), store.ErrNotExist, driver.FaultNone, 404},
		{"list 404 odd code", call{op: "list"}, apiErr("ListObjectsV2", 404, "Whatever"), store.ErrBucketMissing, driver.FaultNone, 404},
		{"put NoSuchBucket", call{op: "put"}, apiErr("PutObject", 404, "NoSuchBucket"), store.ErrBucketMissing, driver.FaultNone, 404},
		{"if-match put NoSuchKey", call{op: "put", ifMatch: true}, apiErr("PutObject", 404, "NoSuchKey"), store.ErrPreconditionFailed, driver.FaultNone, 404},
		{"412", call{op: "put"}, apiErr("PutObject", 412, "PreconditionFailed"), store.ErrPreconditionFailed, driver.FaultNone, 412},
		{"412 no code", call{op: "head"}, apiErr("HeadObject", 412, ""), store.ErrPreconditionFailed, driver.FaultNone, 412},
		{"409 conflict", call{op: "put"}, apiErr("CompleteMultipartUpload", 409, "ConditionalRequestConflict"), store.ErrPreconditionFailed, driver.FaultNone, 409},
		{"403 AccessDenied", call{op: "get"}, apiErr("GetObject", 403, "AccessDenied"), store.ErrForbidden, driver.FaultNone, 403},
		{"403 InvalidAccessKeyId", call{op: "list"}, apiErr("ListObjectsV2", 403, "InvalidAccessKeyId"), store.ErrForbidden, driver.FaultNone, 403},
		{"403 SignatureDoesNotMatch", call{op: "put"}, apiErr("PutObject", 403, "SignatureDoesNotMatch"), store.ErrForbidden, driver.FaultNone, 403},
		{"head 403", call{op: "head"}, apiErr("HeadObject", 403, "Forbidden"), store.ErrForbidden, driver.FaultNone, 403},
		{"501", call{op: "put"}, apiErr("PutObject", 501, "NotImplemented"), store.ErrUnsupported, driver.FaultNone, 501},
		{"503 SlowDown", call{op: "put"}, apiErr("PutObject", 503, "SlowDown"), store.ErrUnavailable, driver.FaultThrottled, 503},
		{"500", call{op: "get"}, apiErr("GetObject", 500, "InternalError"), store.ErrUnavailable, driver.FaultThrottled, 500},
		{"429", call{op: "get"}, apiErr("GetObject", 429, ""), store.ErrUnavailable, driver.FaultThrottled, 429},
		{"408 from a proxy", call{op: "get"}, apiErr("GetObject", 408, ""), store.ErrUnavailable, driver.FaultTransport, 408},
		{"reset", call{op: "get"}, &smithy.OperationError{Err: &smithyhttp.RequestSendError{Err: syscall.ECONNRESET}}, store.ErrUnavailable, driver.FaultTransport, 0},
		{"unexpected EOF", call{op: "get"}, fmt.Errorf("deserialize: %w", io.ErrUnexpectedEOF), store.ErrUnavailable, driver.FaultTransport, 0},
		{"attempt timeout", call{op: "get"}, fmt.Errorf("send: %w", context.DeadlineExceeded), store.ErrUnavailable, driver.FaultTransport, 0},
		{"role chain", call{op: "get"}, &v4.SigningError{Err: fmt.Errorf("failed to retrieve credentials: %w", &RoleError{Tried: []string{"a", "b"}})}, driver.ErrRoleUnavailable, driver.FaultNone, 0},
		{"no credentials", call{op: "get"}, &v4.SigningError{Err: errors.New("failed to retrieve credentials")}, store.ErrForbidden, driver.FaultNone, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := mapError(context.Background(), tc.c, tc.err)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("mapError = %v, want kind %v", err, tc.kind)
			}
			var e *store.Error
			if !errors.As(err, &e) {
				t.Fatalf("mapError = %T, want *store.Error", err)
			}
			if e.Fault != tc.fault || e.Status != tc.status {
				t.Errorf("fault %v status %d, want %v %d", e.Fault, e.Status, tc.fault, tc.status)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("the cause is lost: %v", err)
			}
		})
	}
}

func TestMapErrorCode(t *testing.T) {
	err := mapError(context.Background(), call{op: "get", key: "k"}, apiErr("GetObject", 404, "NoSuchBucket"))
	var e *store.Error
	if !errors.As(err, &e) || e.Reason != "NoSuchBucket" || e.Op != "get" || e.Key != "k" {
		t.Fatalf("got %#v", err)
	}
}

func TestMapErrorCallerContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := mapError(ctx, call{op: "get"}, &smithy.OperationError{Err: &smithyhttp.RequestSendError{Err: context.Canceled}})
	if err != context.Canceled {
		t.Fatalf("mapError on a cancelled ctx = %v, want context.Canceled unwrapped", err)
	}
	if mapError(context.Background(), call{}, nil) != nil {
		t.Fatal("nil error mapped to non-nil")
	}
}

// skewedErr is an S3 answer of status and code to a request signed at signed, answered at
// store (the answer's Date).
func skewedErr(op string, status int, code string, signed, answered time.Time) error {
	req := &http.Request{Header: http.Header{"X-Amz-Date": {signed.UTC().Format("20060102T150405Z")}}}
	resp := &http.Response{StatusCode: status, Request: req, Header: http.Header{"Date": {answered.UTC().Format(http.TimeFormat)}}}
	return &smithy.OperationError{ServiceID: "S3", OperationName: op, Err: &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: resp},
			Err: &smithy.GenericAPIError{Code: code, Message: "test message"}}}}
}

// TestMapClockSkew: RequestTimeTooSkewed is a clock, not refused credentials: ErrClockSkewed
// with the skew between the answer's Date and the request's X-Amz-Date. A HEAD's 403 carries
// no code: it is a clock skew when those times are more than 15 minutes apart, and forbidden
// otherwise.
func TestMapClockSkew(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		err  error
		kind error
		skew time.Duration
	}{
		{"RequestTimeTooSkewed", skewedErr("PutObject", 403, "RequestTimeTooSkewed", now.Add(-30*time.Minute), now), store.ErrClockSkewed, 30 * time.Minute},
		{"RequestTimeTooSkewed, ahead", skewedErr("PutObject", 403, "RequestTimeTooSkewed", now.Add(20*time.Minute), now), store.ErrClockSkewed, -20 * time.Minute},
		{"RequestTimeTooSkewed, no Date", apiErr("PutObject", 403, "RequestTimeTooSkewed"), store.ErrClockSkewed, 0},
		{"head 403, 30 min apart", skewedErr("HeadObject", 403, "Forbidden", now.Add(-30*time.Minute), now), store.ErrClockSkewed, 30 * time.Minute},
		{"head 403, 1 min apart", skewedErr("HeadObject", 403, "Forbidden", now.Add(-time.Minute), now), store.ErrForbidden, 0},
		{"AccessDenied, 30 min apart", skewedErr("GetObject", 403, "AccessDenied", now.Add(-30*time.Minute), now), store.ErrForbidden, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := mapError(context.Background(), call{op: "put", key: "k"}, c.err)
			if !errors.Is(err, c.kind) || (c.kind == store.ErrClockSkewed) == errors.Is(err, store.ErrForbidden) {
				t.Fatalf("mapError = %v, want kind %v only", err, c.kind)
			}
			var se *driver.SkewError
			if c.kind != store.ErrClockSkewed {
				return
			}
			if !errors.As(err, &se) || se.Skew() != c.skew {
				t.Fatalf("mapError = %v: skew %v, want %v", err, se, c.skew)
			}
			if c.skew != 0 && !strings.Contains(err.Error(), (c.skew.Abs()).String()) {
				t.Errorf("the message %q does not name the skew %s", err, c.skew.Abs())
			}
		})
	}
}
