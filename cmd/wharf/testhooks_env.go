package main

// The variables the test hooks read (testhooks.go, built only with the wharftest tag). A
// release binary neither reads nor holds them.
const (
	envTestPause = "WHARF_TEST_EXPORT_PAUSE" // pauses of `wharf export` (crash tests)
	envTestShip  = "WHARF_TEST_SHIP"         // kill and pause points of `wharf ship` (crash tests)
)
