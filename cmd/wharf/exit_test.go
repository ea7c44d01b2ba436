package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/probe"
)

func TestExitCode(t *testing.T) {
	wrap := func(kind *errcode.Code) error {
		return fmt.Errorf("s3://b/k: %w", &store.Error{Op: "get", Key: "k", Kind: kind})
	}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"not found", wrap(store.ErrNotExist), 1},
		{"precondition", wrap(store.ErrPreconditionFailed), 1},
		{"bucket missing", wrap(store.ErrBucketMissing), 1},
		{"forbidden", wrap(store.ErrForbidden), 1},
		{"unavailable", wrap(store.ErrUnavailable), 1},
		{"outcome unknown", wrap(store.ErrOutcomeUnknown), 1},
		{"unsupported", wrap(store.ErrUnsupported), 1},
		{"coordination unproven", wrap(probe.ErrCoordinationUnproven), 1},
		{"key invalid", wrap(store.ErrKeyInvalid), 2},
		{"config", wrap(store.ErrConfig), 2},
		{"endpoint unsupported", wrap(driver.ErrEndpointUnsupported), 2},
		{"endpoint insecure", wrap(driver.ErrEndpointInsecure), 2},
		{"endpoint not allowed", wrap(driver.ErrEndpointNotAllowed), 2},
		{"credential literal", wrap(driver.ErrCredentialLiteral), 2},
		{"credential unbound", wrap(driver.ErrCredentialUnbound), 2},
		{"credential conflict", wrap(driver.ErrCredentialConflict), 2},
		{"usage", usageErr(errors.New("want one URL")), 2},
		{"plain error", errors.New("disk full"), 1},
		{"cancelled", fmt.Errorf("get: %w", context.Canceled), 130},
	}
	for _, tt := range tests {
		if got := exitCode(context.Background(), tt.err); got != tt.want {
			t.Errorf("%s: exitCode = %d, want %d", tt.name, got, tt.want)
		}
	}
	if got := exitCode(context.Background(), errcode.E("resume", "p", export.ErrDestAlreadyComplete, nil)); got != 5 {
		t.Errorf("WHARF_DEST_ALREADY_COMPLETE exits %d, want 5", got)
	}
}

func TestExitCodeAfterCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// A backend may report a cancelled request as something else; the context decides.
	err := &store.Error{Op: "get", Key: "k", Kind: store.ErrUnavailable, Err: errors.New("connection reset")}
	if got := exitCode(ctx, err); got != exitInterrupted {
		t.Errorf("exitCode after cancel = %d, want %d", got, exitInterrupted)
	}
	// A collision found before the stop is still the collision.
	collision := fmt.Errorf("ship: %w", &store.Error{Op: "put", Key: "k", Kind: ship.ErrObjectKeyCollision, Err: errors.New("different bytes")})
	if got := exitCode(ctx, collision); got != exitFailed {
		t.Errorf("exitCode of a collision after cancel = %d, want %d", got, exitFailed)
	}
	if got := exitCode(ctx, fmt.Errorf("stopping: %w", context.Canceled)); got != exitInterrupted {
		t.Errorf("exitCode of context.Canceled = %d, want %d", got, exitInterrupted)
	}
}

func TestPrintErrorPretty(t *testing.T) {
	var b bytes.Buffer
	err := fmt.Errorf("s3://b/k: %w", &store.Error{Op: "get", Key: "k", Kind: store.ErrNotExist, Err: nil})
	printError(&b, "pretty", err, 1)
	want := "wharf: s3://b/k: get \"k\": object does not exist [WHARF_NOT_FOUND]\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	printError(&b, "pretty", errors.New("two\nlines"), 1)
	if b.String() != "wharf: two lines\n" {
		t.Errorf("uncoded error printed as %q", b.String())
	}
	b.Reset()
	printError(&b, "pretty", context.Canceled, exitInterrupted)
	if b.String() != "wharf: interrupted [WHARF_INTERRUPTED]\n" {
		t.Errorf("interrupt printed as %q", b.String())
	}
}

func TestPrintErrorJSON(t *testing.T) {
	var b bytes.Buffer
	printError(&b, "json", &store.Error{Op: "head", Key: "k", Kind: store.ErrBucketMissing, Err: nil}, 1)
	var got struct {
		Error, Code string
		Exit        int
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %q: %v", b.String(), err)
	}
	if got.Code != "WHARF_BUCKET_MISSING" || got.Exit != 1 || !strings.Contains(got.Error, `head "k"`) {
		t.Errorf("got %+v", got)
	}
	if strings.Count(b.String(), "\n") != 1 {
		t.Errorf("want one line, got %q", b.String())
	}
}
