package driver

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Backend is what a backend registers for its URL scheme, from its package's init. Only
// cmd/wharf (and tests) import backends, so a program links exactly the stores it names.
type Backend struct {
	// Scheme is the URL scheme: "s3" serves s3://….
	Scheme string
	// Path, when set, parses plain local paths (no scheme: ./dir, /abs/dir): they name this
	// backend.
	Path func(path string) (Location, error)
	// Words are whole arguments that name this backend ("-" for standard output).
	Words []string
	// WriteOnly says the backend is a stream that keeps nothing (standard output): what is
	// written cannot be read, listed or deleted, and Get, Head, List and Delete are
	// ErrUnsupported. A job that must read back what it wrote refuses it before it starts.
	WriteOnly bool
	// Local says the backend's bucket is a directory of this machine's file system (its
	// Location.Bucket is the absolute path): Location.LocalPath answers from it.
	Local bool
	// NoUploads, when set, says why a backend that has incomplete uploads cannot list them
	// (it keeps no driver.UploadLister): the reason a refused ListUploads gives.
	NoUploads string
	// Noun is what the backend calls its bucket ("container", "directory"); "" is "bucket".
	Noun string

	// Parse splits what follows "scheme://" (or a plain path, or a word) into the store's root
	// and the key, byte for byte: everything after the bucket is the key, whatever characters
	// it holds. It may look at the local filesystem (a file store finds its root) but never
	// connects or reads a credential.
	Parse func(rest string) (Location, error)

	// Object re-roots a location that must name one object, where the backend's roots are not
	// buckets (a local path names a file inside a directory). Nil: the location is used as it
	// is, and an empty or '/'-terminated key names no object.
	Object func(loc Location) Location

	options func() Options
	open    func(ctx context.Context, loc Location, opts Options, c *Common) (Bucket, error)
}

var (
	registryMu sync.RWMutex
	registry   = map[string]*Backend{}
)

// NewOptions returns the backend's options with their defaults: a pointer to a struct with
// yaml tags, which package store decodes strictly (an unknown key is an error naming it),
// after the environment defaults and before the flags.
func (b *Backend) NewOptions() Options { return b.options() }

// Open opens the bucket at loc's root with opts (from NewOptions), which have passed Check.
// It reads credential references but does not connect: a missing bucket is found by the
// first operation.
func (b *Backend) Open(ctx context.Context, loc Location, opts Options, c *Common) (Bucket, error) {
	return b.open(ctx, loc, opts, c)
}

// Register makes a backend available for its scheme, with open as its constructor: open's
// options type (a pointer to a struct with yaml tags) is the backend's options, which package
// store fills and checks before it calls open. Registering a scheme twice, a second backend
// for plain paths or a word twice panics.
func Register[O any, P interface {
	*O
	Options
}, B Bucket](b Backend, open func(context.Context, Location, P, *Common) (B, error)) {
	b.options = func() Options { return P(new(O)) }
	b.open = func(ctx context.Context, loc Location, opts Options, c *Common) (Bucket, error) {
		bucket, err := open(ctx, loc, opts.(P), c)
		if err != nil {
			return nil, err // not a typed nil in a non-nil interface
		}
		return bucket, nil
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if b.Scheme == "" || b.Parse == nil || open == nil {
		panic(fmt.Sprintf("driver: backend %q lacks a scheme, Parse or a constructor", b.Scheme))
	}
	if _, dup := registry[b.Scheme]; dup {
		panic(fmt.Sprintf("driver: scheme %q registered twice", b.Scheme))
	}
	for _, other := range registry {
		if b.Path != nil && other.Path != nil {
			panic(fmt.Sprintf("driver: plain paths registered by %q and %q", other.Scheme, b.Scheme))
		}
		for _, w := range b.Words {
			for _, ow := range other.Words {
				if w == ow {
					panic(fmt.Sprintf("driver: %q registered by %q and %q", w, other.Scheme, b.Scheme))
				}
			}
		}
	}
	registry[b.Scheme] = &b
}

// Lookup returns the backend registered for scheme.
func Lookup(scheme string) (*Backend, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	b, ok := registry[strings.ToLower(scheme)]
	return b, ok
}

// Schemes returns the registered schemes, sorted.
func Schemes() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var out []string
	for s := range registry {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func find(match func(*Backend) bool) (*Backend, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	for _, b := range registry {
		if match(b) {
			return b, true
		}
	}
	return nil, false
}

// SplitScheme splits raw into its scheme and the rest when it has the form scheme://rest with
// a scheme of letters, digits, '+', '-' (no '/', '.' or '\': "./a://b" is a path).
func SplitScheme(raw string) (scheme, rest string, ok bool) {
	scheme, rest, ok = strings.Cut(raw, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/.\\") {
		return "", "", false
	}
	return strings.ToLower(scheme), rest, true
}

// ParseURL parses a store URL with the backend its scheme names (a word such as "-", and a
// plain path, go to the backends that registered them). It only parses: no credential is
// read and no connection made. An unknown scheme is ErrEndpointUnsupported, naming it.
func ParseURL(raw string) (Location, error) {
	if raw == "" {
		return Location{}, &Error{Op: "parse-url", Kind: ErrEndpointUnsupported, Err: fmt.Errorf("empty URL")}
	}
	if b, ok := find(func(b *Backend) bool { return contains(b.Words, raw) }); ok {
		return b.Parse(raw)
	}
	scheme, rest, ok := SplitScheme(raw)
	if !ok {
		if word, ok := urlLike(raw); ok {
			return Location{}, &Error{Op: "parse-url", Key: RedactURL(raw), Kind: ErrConfig,
				Err: fmt.Errorf("a local path that reads like a store URL with one slash: write %s://… for a store, or ./%s:/… for a local path", word, raw[:len(word)])}
		}
		b, found := find(func(b *Backend) bool { return b.Path != nil })
		if !found {
			return Location{}, &Error{Op: "parse-url", Key: raw, Kind: ErrEndpointUnsupported,
				Err: fmt.Errorf("a plain path, and no backend for local paths in this build")}
		}
		return b.Path(raw)
	}
	b, found := Lookup(scheme)
	if !found {
		return Location{}, &Error{Op: "parse-url", Key: RedactURL(raw), Kind: ErrEndpointUnsupported,
			Err: fmt.Errorf("scheme %q is not one of %s", scheme, strings.Join(Schemes(), ", "))}
	}
	return b.Parse(rest)
}

// urlLike reports whether raw, a path with no "://", begins as a URL would with one slash
// missing (s3:/bucket/key, gs:/b/): a word of two or more letters, digits, '+', '-' or '.'
// that begins with a letter, then ":/". Taken for a local path, it would write ./s3:/bucket/key
// (and rm -r would delete there), so it is refused; ./s3:/… is the local path. One letter
// (C:/) is a Windows drive, not a scheme.
func urlLike(raw string) (word string, ok bool) {
	word, _, ok = strings.Cut(raw, ":/")
	if !ok || len(word) < 2 {
		return "", false
	}
	for i, r := range word {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return "", false
		}
	}
	return strings.ToLower(word), true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
