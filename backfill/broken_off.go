//go:build !wharftest

package backfill

// brokenPlan is always false in a release build: see broken_on.go.
const brokenPlan = false
