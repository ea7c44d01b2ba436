//go:build wharftest

package main

import (
	"context"
	"os"
	"time"
)

// envTestSyncHold names a file: once a sync has listed both ends and planned, it writes
// FILE.planned and waits until FILE exists (or it is stopped), so that a test can change the
// destination between the listing and the writes, as a racing writer would.
const envTestSyncHold = "WHARF_TEST_SYNC_HOLD"

// syncTestHold waits as envTestSyncHold says; it does nothing without it.
func syncTestHold(ctx context.Context, getenv func(string) string) {
	file := getenv(envTestSyncHold)
	if file == "" {
		return
	}
	_ = os.WriteFile(file+".planned", nil, 0o644)
	for ctx.Err() == nil {
		if _, err := os.Stat(file); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
