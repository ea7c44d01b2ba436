package main

import "github.com/wharfdata/wharf/store/driver"

// The variables the test hooks read (testhooks.go, built only with the wharftest tag). A
// release binary neither reads nor holds them.
const (
	envTestPause = "WHARF_TEST_EXPORT_PAUSE" // pauses of `wharf export` (crash tests)
	envTestShip  = "WHARF_TEST_SHIP"         // kill and pause points of `wharf ship` (crash tests)
	envTestLoad  = "WHARF_TEST_LOAD_PAUSE"   // pauses of `wharf load` (crash tests)
)

// chainWraps applies each non-nil decorator in turn (the first innermost); nil when none.
func chainWraps(ws ...func(driver.Bucket) driver.Bucket) func(driver.Bucket) driver.Bucket {
	var set []func(driver.Bucket) driver.Bucket
	for _, w := range ws {
		if w != nil {
			set = append(set, w)
		}
	}
	if len(set) == 0 {
		return nil
	}
	return func(b driver.Bucket) driver.Bucket {
		for _, w := range set {
			b = w(b)
		}
		return b
	}
}
