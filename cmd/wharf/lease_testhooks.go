//go:build wharftest

package main

import (
	"context"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/wharfdata/wharf/store/driver"
)

// envTestLease is WHARF_TEST_LEASE, read only by a build with the wharftest tag:
//
//	kill-after-entry:N   SIGKILL itself once the Nth commit-log entry has landed, before the
//	                     pointer is advanced to it (a crash in the middle of a commit)
const envTestLease = "WHARF_TEST_LEASE"

// leaseTestWrap returns a decorator of a store's bucket that applies WHARF_TEST_LEASE, or nil.
func leaseTestWrap(getenv func(string) string) func(driver.Bucket) driver.Bucket {
	name, v, _ := strings.Cut(getenv(envTestLease), ":")
	n, err := strconv.ParseInt(v, 10, 64)
	if name != "kill-after-entry" || err != nil || n < 1 {
		return nil
	}
	return func(b driver.Bucket) driver.Bucket { return &killingBucket{Bucket: b, at: n} }
}

// killingBucket kills the process after the at-th put of a log entry.
type killingBucket struct {
	driver.Bucket
	at   int64
	seen atomic.Int64
}

func (k *killingBucket) Unwrap() driver.Bucket { return k.Bucket }

func (k *killingBucket) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	info, err := k.Bucket.Put(ctx, key, body, opts)
	if err == nil && strings.Contains(key, "_wharf/log/") && k.seen.Add(1) == k.at {
		killSelf()
	}
	return info, err
}
