package main

// Packages no command links yet, imported here so that their WHARF_ codes are registered in
// the test binary and docs/errors.md lists them (TestErrorsDocumented).
import _ "github.com/wharfdata/wharf/iceberg"
