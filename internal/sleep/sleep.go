package sleep

import (
	"context"
	"time"
)

// For waits d, or until ctx ends: nil once d has passed, ctx's error if it ended first.
func For(ctx context.Context, d time.Duration) error { return Or(ctx, d, nil) }

// Or is For that also returns nil early once wake is ready (a nil wake never is).
func Or(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	case <-wake:
		return nil
	}
}
