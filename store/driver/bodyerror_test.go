package driver

import (
	"context"
	"errors"
	"io"
	"testing"
)

func TestBodyError(t *testing.T) {
	ctx := context.Background()
	err := BodyError(ctx, "put", "k", io.ErrUnexpectedEOF)
	var e *Error
	if !errors.As(err, &e) || e.Key != "k" || e.Op != "put" || !errors.Is(err, ErrUnavailable) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a failed body: %v", err)
	}
	src := &Error{Op: "get", Key: "source/key", Kind: ErrNotExist}
	if got := BodyError(ctx, "put", "k", src); got != error(src) {
		t.Fatalf("a store error from the body became %v, want it as it is", got)
	}
	if got := BodyError(ctx, "put", "k", context.Canceled); got != context.Canceled {
		t.Fatalf("a cancellation became %v", got)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if got := BodyError(done, "put", "k", io.ErrUnexpectedEOF); !errors.Is(got, context.Canceled) {
		t.Fatalf("with the context ended: %v, want its error", got)
	}
}

func TestWithoutFault(t *testing.T) {
	in := &Error{Op: "put", Key: "k", Kind: ErrUnavailable, Fault: FaultTransport}
	out := WithoutFault(in)
	var e *Error
	if !errors.As(out, &e) || e.Fault != FaultNone || e.Key != "k" || !errors.Is(out, ErrUnavailable) {
		t.Fatalf("WithoutFault = %#v", out)
	}
	if in.Fault != FaultTransport {
		t.Fatal("WithoutFault changed its argument")
	}
	plain := errors.New("x")
	if WithoutFault(plain) != plain {
		t.Fatal("a plain error changed")
	}
}
