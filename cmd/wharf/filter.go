package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/transfer"
)

// filterFlags adds --include and --exclude to fs: each occurrence of either adds its rule to
// f in the order given on the command line, as aws-cli reads them (the last rule that
// matches a name decides).
func filterFlags(fs *pflag.FlagSet, f *transfer.Filter) {
	fs.Var(filterValue{f, true}, "include", "take the names below the source that match PATTERN again (after an --exclude); * matches across '/'")
	fs.Var(filterValue{f, false}, "exclude", "leave out the names below the source that match PATTERN, e.g. '*.tmp' (repeatable, in order with --include)")
}

// filterOf is f when it has rules, else nil.
func filterOf(f *transfer.Filter) *transfer.Filter {
	if f.IsZero() {
		return nil
	}
	return f
}

type filterValue struct {
	f       *transfer.Filter
	include bool
}

func (v filterValue) String() string { return "" }
func (v filterValue) Type() string   { return "PATTERN" }

func (v filterValue) Set(pattern string) error {
	if v.include {
		return v.f.Include(pattern)
	}
	return v.f.Exclude(pattern)
}

// hasWildcard reports whether raw, a store URL, holds a wildcard in its key.
func hasWildcard(raw string) bool {
	_, rest, ok := strings.Cut(raw, "://")
	return ok && transfer.HasWildcard(rest)
}

// treeOf reads loc's key as a tree: a key with a wildcard is split into the prefix that is
// listed (loc.Key becomes it) and the pattern the names below it must match; any other key
// is read as a directory (s3://b/logs is every key under logs/). It returns what the tree
// takes, given a name below loc.Key: the wildcard's match and f's (nil: every name).
func treeOf(loc *store.Location, f *transfer.Filter) (func(name string) bool, error) {
	var match *transfer.Filter
	if transfer.HasWildcard(loc.Key) {
		base, pattern, _ := transfer.SplitWildcard(loc.Key)
		m, err := transfer.PatternFilter(pattern)
		if err != nil {
			return nil, usageErr(fmt.Errorf("%s: %w", loc, err))
		}
		loc.Key, match = base, m
	} else if loc.Key != "" && !strings.HasSuffix(loc.Key, "/") {
		loc.Key += "/"
	}
	if match == nil && f == nil {
		return nil, nil
	}
	return func(name string) bool { return match.Takes(name) && f.Takes(name) }, nil
}

// attributeFlags adds the flags that set what every object a copy writes to a store carries,
// over what it would carry from its source.
func attributeFlags(fs *pflag.FlagSet, o *transfer.Options) {
	fs.StringVar(&o.ContentType, "content-type", "", "the Content-Type of every object written to a store (default: the source's, or one from the file's extension)")
	fs.StringVar(&o.Headers.CacheControl, "cache-control", "", "the Cache-Control header of every object written to a store")
	fs.StringVar(&o.Headers.ContentEncoding, "content-encoding", "", "the Content-Encoding header of every object written to a store, e.g. gzip")
	fs.StringVar(&o.Headers.ContentDisposition, "content-disposition", "", "the Content-Disposition header of every object written to a store")
	fs.StringVar(&o.StorageClass, "storage-class", "", "the storage class of every object written to a store: S3's STANDARD_IA, GLACIER_IR…, GCS's NEARLINE, COLDLINE…, Azure's access tier Hot, Cool, Cold, Archive")
	fs.StringVar(&o.Encryption.Mode, "sse", "", "server-side encryption of every object written to an S3 store: AES256 or aws:kms")
	fs.StringVar(&o.Encryption.KMSKeyID, "sse-kms-key-id", "", "the KMS key of every object written: S3's key id or ARN (implies --sse aws:kms), GCS's Cloud KMS key resource name")
}

// checkEncryption refuses an --sse the stores do not name.
func checkEncryption(e store.Encryption) error {
	switch e.Mode {
	case "", "AES256", "aws:kms":
	default:
		return usageErr(fmt.Errorf("--sse %q: want AES256 or aws:kms", e.Mode))
	}
	if e.Mode == "AES256" && e.KMSKeyID != "" {
		return usageErr(errors.New("--sse AES256 uses the store's own keys: --sse-kms-key-id is for --sse aws:kms"))
	}
	return nil
}
