//go:build !wharftest

package main

import (
	"github.com/wharfdata/wharf/load"
	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/store/driver"
)

// A release build has no test hooks: these stand in for testhooks.go, which only a build
// with the wharftest tag (scripts/test.sh) compiles. The environment is not even read.

func exportTestWrap(func(string) string) func(driver.Bucket) driver.Bucket { return nil }

func loadTestPause(func(string) string) func(load.Progress) { return nil }

func shipTestHooks(func(string) string) ship.Hooks { return ship.Hooks{} }

func shipTestWrap(func(string) string) func(driver.Bucket) driver.Bucket { return nil }
