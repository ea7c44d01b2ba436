package sleep

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestForWaitsItsTime(t *testing.T) {
	start := time.Now()
	if err := For(context.Background(), 30*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Errorf("returned after %s, before its time", took)
	}
}

func TestForEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() { done <- For(ctx, time.Hour) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("an hour's sleep did not end with its context")
	}
}

func TestForNothingReturnsAtOnce(t *testing.T) {
	if err := For(context.Background(), 0); err != nil {
		t.Errorf("a zero sleep: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := For(ctx, -time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("a negative sleep in an ended context: %v, want its error", err)
	}
}

func TestOrWakesEarly(t *testing.T) {
	wake := make(chan struct{})
	time.AfterFunc(10*time.Millisecond, func() { close(wake) })
	done := make(chan error, 1)
	go func() { done <- Or(context.Background(), time.Hour, wake) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("woken: %v, want nil", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("not woken")
	}
}
