//go:build !wharftest

package s3

import (
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wharfdata/wharf/store/driver"
)

// testClientOptions stands in for the test hooks of testhooks.go, which only a build with the
// wharftest tag compiles: a release build has none.
func testClientOptions(*driver.Common) func(*s3.Options) { return nil }
