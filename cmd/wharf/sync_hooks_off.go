//go:build !wharftest

package main

import "context"

// A release build has no sync test hook: this stands in for sync_hooks.go.
func syncTestHold(context.Context, func(string) string) {}
