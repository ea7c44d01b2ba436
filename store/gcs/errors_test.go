package gcs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"syscall"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

func TestMapError(t *testing.T) {
	api := func(code int, reason string) error {
		e := &googleapi.Error{Code: code, Message: "m"}
		if reason != "" {
			e.Errors = []googleapi.ErrorItem{{Reason: reason}}
		}
		return fmt.Errorf("storage: wrapped: %w", e)
	}
	netErr := &url.Error{Op: "Get", URL: "http://127.0.0.1:1/", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name   string
		err    error
		kind   *errcode.Code
		fault  driver.Fault
		status int
		code   string
	}{
		{"object not found", fmt.Errorf("%w: %w", storage.ErrObjectNotExist, api(404, "notFound")), store.ErrNotExist, driver.FaultNone, 404, "notFound"},
		{"XML read not found", storage.ErrObjectNotExist, store.ErrNotExist, driver.FaultNone, 404, "notFound"},
		{"bucket not found", fmt.Errorf("%w: %w", storage.ErrBucketNotExist, api(404, "notFound")), store.ErrBucketMissing, driver.FaultNone, 404, "notFound"},
		{"upload 404", api(404, "notFound"), store.ErrNotExist, driver.FaultNone, 404, "notFound"},
		{"precondition", api(412, "conditionNotMet"), store.ErrPreconditionFailed, driver.FaultNone, 412, "conditionNotMet"},
		{"XML precondition", &googleapi.Error{Code: 412, Body: "<?xml version='1.0'?><Error><Code>PreconditionFailed</Code></Error>"},
			store.ErrPreconditionFailed, driver.FaultNone, 412, "PreconditionFailed"},
		{"conflict", api(409, "conflict"), store.ErrPreconditionFailed, driver.FaultNone, 409, "conflict"},
		{"forbidden", api(403, "forbidden"), store.ErrForbidden, driver.FaultNone, 403, "forbidden"},
		{"unauthorized", api(401, "required"), store.ErrForbidden, driver.FaultNone, 401, "required"},
		{"bad request", api(400, "invalid"), store.ErrUnsupported, driver.FaultNone, 400, "invalid"},
		{"not implemented", api(501, ""), store.ErrUnsupported, driver.FaultNone, 501, ""},
		{"rate limit", api(429, "rateLimitExceeded"), store.ErrUnavailable, driver.FaultThrottled, 429, "rateLimitExceeded"},
		{"server error", api(500, "backendError"), store.ErrUnavailable, driver.FaultThrottled, 500, "backendError"},
		{"unavailable", api(503, ""), store.ErrUnavailable, driver.FaultThrottled, 503, ""},
		{"request timeout", api(408, ""), store.ErrUnavailable, driver.FaultTransport, 408, ""},
		{"connection refused", netErr, store.ErrUnavailable, driver.FaultTransport, 0, ""},
		{"refused reopen", errReopen, store.ErrUnavailable, driver.FaultTransport, 0, ""},
		{"no credentials file", &url.Error{Op: "Get", Err: &credentialsError{&fs.PathError{Op: "open", Path: "/k.json", Err: syscall.ENOENT}}},
			store.ErrForbidden, driver.FaultNone, 0, ""},
		{"token endpoint unreachable", &url.Error{Op: "Get", Err: &credentialsError{fmt.Errorf("auth: %w", netErr)}},
			store.ErrUnavailable, driver.FaultTransport, 0, ""},
		{"attempt timed out", context.DeadlineExceeded, store.ErrUnavailable, driver.FaultTransport, 0, ""},
	}
	for _, tc := range tests {
		err := mapError(context.Background(), call{op: "get", key: "k"}, tc.err)
		var e *store.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v is not a *store.Error", tc.name, err)
			continue
		}
		if e.Kind != tc.kind || e.Fault != tc.fault || e.Status != tc.status || e.Reason != tc.code || e.Op != "get" || e.Key != "k" {
			t.Errorf("%s: kind %v fault %v status %d code %q (%s %q), want %v %v %d %q",
				tc.name, e.Kind, e.Fault, e.Status, e.Reason, e.Op, e.Key, tc.kind, tc.fault, tc.status, tc.code)
		}
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: the cause is lost: %v", tc.name, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := mapError(ctx, call{op: "get"}, api(503, "")); err != context.Canceled {
		t.Errorf("with the caller's context done: %v, want the bare context error", err)
	}
	if mapError(context.Background(), call{}, nil) != nil {
		t.Error("nil error mapped to non-nil")
	}
}

// TestFrontier: how far List trusts a truncated page, for the shapes Cloud Storage and
// fake-gcs-server give.
func TestFrontier(t *testing.T) {
	obj := func(n string) entry { return entry{name: n} }
	pre := func(n string) entry { return entry{name: n, prefix: true} }
	tests := []struct {
		name      string
		entries   []entry
		truncated bool
		cursor    string
		limit     string
		ok        bool
	}{
		{"complete", []entry{obj("a"), pre("b/")}, false, "", "", false},
		{"fake-gcs prefixes ahead of objects", []entry{pre("a/"), obj("b"), obj("d"), pre("z/")}, true, "", "d", true},
		{"the cursor echoed back", []entry{obj("b"), obj("c"), pre("d/")}, true, "b", "c", true},
		{"a page of prefixes", []entry{obj("b"), pre("c/"), pre("d/")}, true, "b", "d/", true},
		{"nothing past the cursor", []entry{obj("b")}, true, "b", "", false},
		{"empty truncated page", nil, true, "", "", false},
	}
	for _, tc := range tests {
		limit, ok := frontier(tc.entries, tc.truncated, tc.cursor)
		if limit != tc.limit || ok != tc.ok {
			t.Errorf("%s: frontier %q %v, want %q %v", tc.name, limit, ok, tc.limit, tc.ok)
		}
	}
}

func TestChunkSize(t *testing.T) {
	b := &Bucket{}
	for _, tc := range []struct{ opt, cfg, want int64 }{
		{0, 0, DefaultPartSize},
		{0, 5 << 20, 5 << 20},
		{1, 5 << 20, minChunk},
		{minChunk + 1, 0, 2 * minChunk},
	} {
		b.partSize = tc.cfg
		if got := b.chunkSize(&store.PutOptions{PartSize: tc.opt}); int64(got) != tc.want {
			t.Errorf("part size %d, config %d: chunk %d, want %d", tc.opt, tc.cfg, got, tc.want)
		}
	}
}
