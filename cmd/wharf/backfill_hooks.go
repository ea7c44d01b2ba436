//go:build wharftest

package main

import (
	"context"
	"time"

	"github.com/wharfdata/wharf/store/driver"
)

// envTestBackfillPause slows every read of a backfill's source by a duration (the fleet
// tests stretch a job so that a worker killed at a random time dies inside a split).
const envTestBackfillPause = "WHARF_TEST_BACKFILL_PAUSE"

// backfillTestWrap returns a decorator of the source's bucket that sleeps before each Get,
// or nil without the variable.
func backfillTestWrap(getenv func(string) string) func(driver.Bucket) driver.Bucket {
	d, err := time.ParseDuration(getenv(envTestBackfillPause))
	if err != nil || d <= 0 {
		return nil
	}
	return func(b driver.Bucket) driver.Bucket { return &slowSource{Bucket: b, d: d} }
}

// slowSource sleeps before each Get; every other call reaches the bucket it wraps.
type slowSource struct {
	driver.Bucket
	d time.Duration
}

func (s *slowSource) Unwrap() driver.Bucket { return s.Bucket }

func (s *slowSource) Get(ctx context.Context, key string, o *driver.GetOptions) (*driver.Object, error) {
	time.Sleep(s.d)
	return s.Bucket.Get(ctx, key, o)
}
