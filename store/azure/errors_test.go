package azure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

// answer builds the error the SDK returns for an Azure answer with status, code and message.
func answer(method string, status int, code, msg, detail string) error {
	body := `<?xml version="1.0" encoding="utf-8"?><Error><Code>` + code + `</Code><Message>` + msg +
		"\nRequestId:0000\nTime:2026-01-01T00:00:00Z</Message>"
	if detail != "" {
		body += "<AuthenticationErrorDetail>" + detail + "</AuthenticationErrorDetail>"
	}
	body += "</Error>"
	u, _ := url.Parse("https://acct1.blob.core.windows.net/cont/some/key?" + plantedSAS)
	resp := &http.Response{
		StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Header:  http.Header{"X-Ms-Error-Code": {code}, "Content-Type": {"application/xml"}},
		Body:    io.NopCloser(strings.NewReader(body)),
		Request: &http.Request{Method: method, URL: u},
	}
	if method == http.MethodHead {
		resp.Body = http.NoBody
	}
	return runtime.NewResponseError(resp)
}

func testContainer(t *testing.T) *Container {
	t.Helper()
	c, err := newContainer(loc, &testConfig{}, env(map[string]string{EnvSASToken: plantedSAS}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMapError(t *testing.T) {
	c := testContainer(t)
	cases := []struct {
		name   string
		c      call
		err    error
		kind   *errcode.Code
		fault  driver.Fault
		status int
	}{
		{"get BlobNotFound", call{op: "get"}, answer("GET", 404, "BlobNotFound", "The specified blob does not exist.", ""), store.ErrNotExist, driver.FaultNone, 404},
		{"head BlobNotFound", call{op: "head"}, answer("HEAD", 404, "BlobNotFound", "", ""), store.ErrNotExist, driver.FaultNone, 404},
		{"head ContainerNotFound", call{op: "head"}, answer("HEAD", 404, "ContainerNotFound", "", ""), store.ErrBucketMissing, driver.FaultNone, 404},
		{"put ContainerNotFound", call{op: "put"}, answer("PUT", 404, "ContainerNotFound", "The specified container does not exist.", ""), store.ErrBucketMissing, driver.FaultNone, 404},
		{"anonymous on a private container", call{op: "list"}, answer("GET", 404, "ResourceNotFound", "The specified resource does not exist.", ""), store.ErrBucketMissing, driver.FaultNone, 404},
		{"list 404 without code", call{op: "list"}, answer("GET", 404, "", "", ""), store.ErrBucketMissing, driver.FaultNone, 404},
		{"if-match put BlobNotFound", call{op: "put", ifMatch: true}, answer("PUT", 404, "BlobNotFound", "", ""), store.ErrPreconditionFailed, driver.FaultNone, 404},
		{"create-if-absent 409", call{op: "put", conditional: true}, answer("PUT", 409, "BlobAlreadyExists", "The specified blob already exists.", ""), store.ErrPreconditionFailed, driver.FaultNone, 409},
		{"412 ConditionNotMet", call{op: "put"}, answer("PUT", 412, "ConditionNotMet", "The condition specified using HTTP conditional header(s) is not met.", ""), store.ErrPreconditionFailed, driver.FaultNone, 412},
		{"412 on a HEAD", call{op: "get"}, answer("HEAD", 412, "", "", ""), store.ErrPreconditionFailed, driver.FaultNone, 412},
		{"lost blocks, conditional", call{op: "put", conditional: true}, answer("PUT", 400, "InvalidBlockList", "The specified block list is invalid.", ""), store.ErrPreconditionFailed, driver.FaultNone, 400},
		{"lost blocks, unconditional", call{op: "put"}, answer("PUT", 400, "InvalidBlockList", "The specified block list is invalid.", ""), store.ErrUnavailable, driver.FaultNone, 400},
		{"403 AuthenticationFailed", call{op: "put"}, answer("PUT", 403, "AuthenticationFailed", "Server failed to authenticate the request.", "Signature not valid in the specified time frame"), store.ErrForbidden, driver.FaultNone, 403},
		{"403 AuthorizationFailure", call{op: "get"}, answer("GET", 403, "AuthorizationFailure", "This request is not authorized to perform this operation.", ""), store.ErrForbidden, driver.FaultNone, 403},
		{"403 AuthorizationPermissionMismatch", call{op: "put"}, answer("PUT", 403, "AuthorizationPermissionMismatch", "", ""), store.ErrForbidden, driver.FaultNone, 403},
		{"401", call{op: "list"}, answer("GET", 401, "NoAuthenticationInformation", "", ""), store.ErrForbidden, driver.FaultNone, 401},
		{"InvalidMetadata", call{op: "put"}, answer("PUT", 400, "InvalidMetadata", "", ""), store.ErrKeyInvalid, driver.FaultNone, 400},
		{"503 ServerBusy", call{op: "put"}, answer("PUT", 503, "ServerBusy", "The server is busy.", ""), store.ErrUnavailable, driver.FaultThrottled, 503},
		{"500 InternalError", call{op: "get"}, answer("GET", 500, "InternalError", "", ""), store.ErrUnavailable, driver.FaultThrottled, 500},
		{"500 OperationTimedOut", call{op: "list"}, answer("GET", 500, "OperationTimedOut", "", ""), store.ErrUnavailable, driver.FaultThrottled, 500},
		{"429", call{op: "get"}, answer("GET", 429, "", "", ""), store.ErrUnavailable, driver.FaultThrottled, 429},
		{"501", call{op: "put"}, answer("PUT", 501, "NotImplemented", "", ""), store.ErrUnsupported, driver.FaultNone, 501},
		{"reset", call{op: "get"}, &url.Error{Op: "Get", URL: "https://acct1.blob.core.windows.net/cont/k?" + plantedSAS, Err: syscall.ECONNRESET}, store.ErrUnavailable, driver.FaultTransport, 0},
		{"unexpected EOF", call{op: "get"}, fmt.Errorf("reading: %w", io.ErrUnexpectedEOF), store.ErrUnavailable, driver.FaultTransport, 0},
		{"attempt timeout", call{op: "get"}, &url.Error{Op: "Get", URL: "https://x/?" + plantedSAS, Err: context.DeadlineExceeded}, store.ErrUnavailable, driver.FaultTransport, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.mapError(context.Background(), tc.c, tc.err)
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
			var re *azcore.ResponseError
			if tc.status != 0 && !errors.As(err, &re) {
				t.Errorf("the SDK's answer is lost: %v", err)
			}
			if strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "RequestId") {
				t.Errorf("error text is not one line without request ids: %q", err)
			}
			wantNoSecret(t, tc.name, err.Error())
			if strings.Contains(err.Error(), "sig=") && !strings.Contains(err.Error(), "sig=[REDACTED]") {
				t.Errorf("error quotes a signature: %v", err)
			}
		})
	}
}

// TestMapErrorExplains: a missing container is named with its account; a forbidden answer
// names the operation and the credentials' source, and a SAS token's past expiry.
func TestMapErrorExplains(t *testing.T) {
	c := testContainer(t)
	err := c.mapError(context.Background(), call{op: "put", key: "k"}, answer("PUT", 404, "ContainerNotFound", "The specified container does not exist.", ""))
	for _, s := range []string{"cont", "acct1", "wharf mb", "The specified container does not exist.", "k"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("missing container: %q does not say %q", err, s)
		}
	}
	err = c.mapError(context.Background(), call{op: "put", key: "k"}, answer("PUT", 403, "AuthenticationFailed", "Server failed to authenticate the request.", ""))
	for _, s := range []string{"put", "SAS token", EnvSASToken} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("forbidden: %q does not say %q", err, s)
		}
	}
	c.creds.sasExpiry = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	err = c.mapError(context.Background(), call{op: "put", key: "k"}, answer("PUT", 403, "AuthenticationFailed", "Server failed to authenticate the request.", ""))
	if !strings.Contains(err.Error(), "expired at 2020-01-02T03:04:05Z") {
		t.Errorf("expired SAS: %q does not say when it expired", err)
	}
	// An authentication detail quoting the request's signature is cut.
	err = c.mapError(context.Background(), call{op: "get", key: "k"}, answer("GET", 403, "AuthenticationFailed", "Server failed to authenticate the request.",
		"The MAC signature found in the HTTP request 'c2lnbmF0dXJlLXF1b3RlZC1ieS10aGUtc2VydmljZS0wMTIzNDU2Nzg5' is not the same as any computed signature."))
	if strings.Contains(err.Error(), "c2lnbmF0dXJlLXF1b3RlZC1ieS10aGUtc2VydmljZS0wMTIzNDU2Nzg5") || !strings.Contains(err.Error(), "MAC signature") {
		t.Errorf("signature in the detail: %v", err)
	}
}

func TestMapErrorContext(t *testing.T) {
	c := testContainer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := c.mapError(ctx, call{op: "get"}, &url.Error{Op: "Get", URL: "https://x/?" + plantedSAS, Err: context.Canceled})
	if err != context.Canceled {
		t.Errorf("cancelled: %v, want the bare context error", err)
	}
	boom := errors.New("the caller's body broke")
	err = c.mapError(context.Background(), call{op: "put", key: "k"}, &url.Error{Op: "Put", URL: "https://x/?" + plantedSAS, Err: &bodyError{boom}})
	if !errors.Is(err, boom) || !errors.Is(err, store.ErrUnavailable) || driver.FaultOf(err) != driver.FaultNone {
		t.Errorf("body error: %v (fault %v), want ErrUnavailable wrapping the body's error, not retried", err, driver.FaultOf(err))
	}
	wantNoSecret(t, "body error", err.Error())
}

// TestMapClockSkew: a refusal whose Date is over 15 minutes from the request's x-ms-date (Azure's
// "Request date header too old", or a HEAD's bare 403) is a clock skew naming both times, not
// refused credentials; within 15 minutes it stays forbidden.
func TestMapClockSkew(t *testing.T) {
	c := testContainer(t)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		method string
		signed time.Time
		kind   *errcode.Code
	}{
		{"date too old", http.MethodPut, now.Add(-20 * time.Minute), driver.ErrClockSkewed},
		{"head, far ahead", http.MethodHead, now.Add(40 * time.Minute), driver.ErrClockSkewed},
		{"a minute apart", http.MethodPut, now.Add(-time.Minute), driver.ErrForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := answer(tc.method, 403, "AuthenticationFailed", "Server failed to authenticate the request.",
				"Request date header too old: '"+tc.signed.Format(http.TimeFormat)+"'")
			var re *azcore.ResponseError
			if !errors.As(err, &re) {
				t.Fatal("not a response error")
			}
			re.RawResponse.Header.Set("Date", now.Format(http.TimeFormat))
			re.RawResponse.Request.Header = http.Header{"X-Ms-Date": {tc.signed.Format(http.TimeFormat)}}
			got := c.mapError(context.Background(), call{op: "put", key: "k"}, err)
			if !errors.Is(got, tc.kind) || (tc.kind == driver.ErrClockSkewed && errors.Is(got, driver.ErrForbidden)) {
				t.Fatalf("mapError = %v, want kind %s only", got, tc.kind.Code())
			}
			var se *driver.SkewError
			if tc.kind == driver.ErrClockSkewed && (!errors.As(got, &se) || se.Skew() != now.Sub(tc.signed)) {
				t.Errorf("mapError = %v: want the skew %s", got, now.Sub(tc.signed))
			}
			if strings.Contains(got.Error(), plantedSAS) {
				t.Errorf("the message holds the SAS token: %v", got)
			}
		})
	}
}
