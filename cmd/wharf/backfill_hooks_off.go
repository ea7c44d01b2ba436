//go:build !wharftest

package main

import (
	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/store/driver"
)

// A release build has no backfill test hooks: these stand in for backfill_hooks.go.

func backfillTestWrap(func(string) string) func(driver.Bucket) driver.Bucket { return nil }

func backfillTestSink(func(string) string) func(backfill.Sink) backfill.Sink { return nil }
