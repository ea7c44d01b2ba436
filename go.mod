module github.com/wharfdata/wharf

go 1.26
