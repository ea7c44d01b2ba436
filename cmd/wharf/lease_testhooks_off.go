//go:build !wharftest

package main

import "github.com/wharfdata/wharf/store/driver"

// A release build has no lease test hooks (see lease_testhooks.go).
func leaseTestWrap(func(string) string) func(driver.Bucket) driver.Bucket { return nil }
