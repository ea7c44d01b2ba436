package main

// The store backends this binary can open. Each registers its URL scheme in init; only this
// command imports them.
import (
	_ "github.com/wharfdata/wharf/store/azure"
	_ "github.com/wharfdata/wharf/store/file"
	_ "github.com/wharfdata/wharf/store/gcs"
	_ "github.com/wharfdata/wharf/store/mem"
	_ "github.com/wharfdata/wharf/store/s3"
	_ "github.com/wharfdata/wharf/store/stdout"
)
