package driver

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Location is a parsed store URL: the store's root and a key (or prefix) inside it.
type Location struct {
	Scheme string // the backend's scheme: "file", "s3", "gs"…
	// Account is the R2 account id or the Azure storage account; "" for other stores.
	Account string
	// Bucket is the bucket (s3, r2, gs), the container (az), the store name (mem), or the
	// absolute directory of a file store.
	Bucket string
	// Key is everything after the bucket, byte for byte, without the '/' that separates it.
	// A trailing '/' is kept: it names a prefix rather than an object.
	Key string
}

// String returns the location as a URL that ParseURL reads back to the same location.
func (l Location) String() string {
	var b strings.Builder
	b.WriteString(l.Scheme)
	b.WriteString("://")
	if l.Account != "" {
		b.WriteString(l.Account)
		b.WriteByte('/')
	}
	b.WriteString(l.Bucket)
	if l.Key != "" {
		if !strings.HasSuffix(l.Bucket, "/") {
			b.WriteByte('/')
		}
		b.WriteString(l.Key)
	}
	return b.String()
}

// LocalPath returns the path on this machine's file system that the location names (its
// directory joined with its key) and true, when its backend keeps objects as local files;
// "" and false for every other location. A key's trailing '/' is not kept.
func (l Location) LocalPath() (string, bool) {
	b, ok := Lookup(l.Scheme)
	if !ok || !b.Local {
		return "", false
	}
	return filepath.Join(l.Bucket, filepath.FromSlash(l.Key)), true
}

// Root returns the location with Key cleared: the bucket itself.
func (l Location) Root() Location {
	l.Key = ""
	return l
}

// BucketURL returns the Backend.Parse of a backend whose URLs name a bucket first, in the
// form given ("gs://bucket/key", which also names the scheme): what follows scheme:// is the
// bucket up to the first '/', then the key. A bucket part holding '@' is refused as a
// credential literal, redacted.
func BucketURL(form string) func(rest string) (Location, error) {
	scheme, _, _ := strings.Cut(form, "://")
	return func(rest string) (Location, error) { return splitBucket(scheme, rest, form) }
}

// AccountURL returns the Backend.Parse of a backend whose URLs name an account, then a
// bucket, in the form given ("az://account/container/key").
func AccountURL(form string) func(rest string) (Location, error) {
	scheme, _, _ := strings.Cut(form, "://")
	return func(rest string) (Location, error) { return splitAccount(scheme, rest, form) }
}

func splitBucket(scheme, rest, what string) (Location, error) {
	bucket, key, _ := strings.Cut(rest, "/")
	if err := checkRootPart(scheme, rest, bucket, what); err != nil {
		return Location{}, err
	}
	return Location{Scheme: scheme, Bucket: bucket, Key: key}, nil
}

func splitAccount(scheme, rest, what string) (Location, error) {
	account, after, _ := strings.Cut(rest, "/")
	bucket, key, _ := strings.Cut(after, "/")
	if err := checkRootPart(scheme, rest, account, what); err != nil {
		return Location{}, err
	}
	if err := checkRootPart(scheme, rest, bucket, what); err != nil {
		return Location{}, err
	}
	return Location{Scheme: scheme, Account: account, Bucket: bucket, Key: key}, nil
}

func checkRootPart(scheme, rest, part, what string) error {
	raw := scheme + "://" + rest
	switch {
	case strings.Contains(part, "@"):
		return &Error{Op: "parse-url", Key: RedactURL(raw), Kind: ErrCredentialLiteral,
			Err: fmt.Errorf("credentials in the URL: give references in the config instead")}
	case part == "":
		return &Error{Op: "parse-url", Key: raw, Kind: ErrConfig, Err: fmt.Errorf("expected %s", what)}
	case strings.ContainsAny(part, "?#"):
		return &Error{Op: "parse-url", Key: raw, Kind: ErrConfig,
			Err: fmt.Errorf("%q is not a bucket name: everything after the bucket is the key, and a store's options (endpoint, region…) come from flags or the config file's stores: section, never from the URL (expected %s)", part, what)}
	}
	return nil
}
