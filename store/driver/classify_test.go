package driver

import (
	"context"
	"errors"
	"testing"

	"github.com/wharfdata/wharf/errcode"
)

func TestClassifyStatus(t *testing.T) {
	for _, c := range []struct {
		status     int
		objectRead bool
		kind       *errcode.Code
		fault      Fault
	}{
		{404, true, ErrNotExist, FaultNone},
		{404, false, ErrBucketMissing, FaultNone},
		{412, false, ErrPreconditionFailed, FaultNone},
		{409, true, ErrPreconditionFailed, FaultNone},
		{403, false, ErrForbidden, FaultNone},
		{501, false, ErrUnsupported, FaultNone},
		{405, false, ErrUnsupported, FaultNone},
		{408, false, ErrUnavailable, FaultTransport},
		{429, false, ErrUnavailable, FaultThrottled},
		{503, false, ErrUnavailable, FaultThrottled},
		{400, false, ErrUnsupported, FaultNone},
	} {
		kind, fault := ClassifyStatus(c.status, c.objectRead)
		if kind != c.kind || fault != c.fault {
			t.Errorf("ClassifyStatus(%d, %v) = %s, %v; want %s, %v", c.status, c.objectRead, kind.Code(), fault, c.kind.Code(), c.fault)
		}
	}
	if kind, _ := MissingObject(true); kind != ErrPreconditionFailed {
		t.Errorf("a missing object under If-Match is %s, want a failed condition", kind.Code())
	}
	if kind, _ := MissingObject(false); kind != ErrNotExist {
		t.Errorf("a missing object is %s, want ErrNotExist", kind.Code())
	}
}

func TestRangeTotal(t *testing.T) {
	for in, want := range map[string]int64{"bytes 0-99/1234": 1234, "bytes 5-5/6": 6, "bytes 0-99/*": -1, "": -1, "bytes 0-9/x": -1} {
		n, ok := RangeTotal(in)
		if want < 0 && ok || want >= 0 && (!ok || n != want) {
			t.Errorf("RangeTotal(%q) = %d, %v; want %d", in, n, ok, want)
		}
	}
}

// MapError lets nil, a finished context and an error already made pass untouched, and hands
// only the rest to the backend.
func TestMapErrorFrame(t *testing.T) {
	calls := 0
	toStore := func(err error) error { calls++; return &Error{Op: "get", Kind: ErrUnavailable, Err: err} }
	if MapError(context.Background(), nil, toStore) != nil {
		t.Error("nil became an error")
	}
	made := &Error{Op: "put", Kind: ErrForbidden}
	if err := MapError(context.Background(), made, toStore); err != made {
		t.Errorf("a store error was remade: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := MapError(ctx, errors.New("boom"), toStore); err != context.Canceled {
		t.Errorf("after cancel: %v, want context.Canceled unwrapped", err)
	}
	if calls != 0 {
		t.Fatalf("toStore called %d times for errors it must not see", calls)
	}
	if err := MapError(context.Background(), errors.New("boom"), toStore); !errors.Is(err, ErrUnavailable) || calls != 1 {
		t.Errorf("an SDK error: %v (calls %d), want toStore's", err, calls)
	}
}
