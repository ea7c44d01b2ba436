package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wharfdata/wharf/internal/yamlconf"
	"github.com/wharfdata/wharf/store/driver"
)

// Config says how to open a store. A backend's options are filled in one order, the same for
// every backend and every command: the options' defaults, then the backend's conventional
// environment (AWS_REGION for S3, STORAGE_EMULATOR_HOST for GCS…, read through Getenv), then
// the config file (the entry of Stores named after the URL's scheme or store name, then the
// section's own store: options), then the flags (Set). So a flag beats the file, the file
// beats the environment, and the environment beats a default.
type Config struct {
	// Options, when set, are the backend's typed options (for programs using the Go API,
	// such as s3.Options); they replace the defaults and the environment.
	Options driver.Options
	// raw are the options of a config file's section (a store: mapping).
	raw yamlconf.Raw
	// Stores are the named stores of the config file.
	Stores Stores
	// Set are options given on the command line, applied last, in order.
	Set []Setting

	// Getenv reads the environment; nil reads nothing (every variable unset).
	Getenv    func(string) string
	Allowlist []string // endpoint host patterns (WHARF_ENDPOINT_ALLOWLIST); empty allows any
	// RequireAllow makes a custom endpoint outside this machine need an allow-list entry even
	// when Allowlist is empty (an export destination).
	RequireAllow bool
	Retry        *RetryPolicy // nil: DefaultRetryPolicy
	Logger       *slog.Logger // nil: discard
	// CreateDir makes a store whose root is a local directory make it on its first write and
	// read a missing one as empty (a job's output directory); a bucket is never created.
	CreateDir bool
	// Wrap decorates the backend's bucket once it is opened (fault injection, test pauses).
	Wrap func(driver.Bucket) driver.Bucket
}

// Setting is one option given on the command line: the backend option's name ("endpoint"),
// its value as text, and where it came from ("--endpoint"), for messages.
type Setting struct {
	Name, Value, Source string
}

// SetRaw keeps a config file's store: section; package yamlconf calls it while decoding.
func (c *Config) SetRaw(r yamlconf.Raw) { c.raw = r }

// HasFileOptions reports whether a config file gave this store options of its own.
func (c *Config) HasFileOptions() bool { return !c.raw.IsZero() }

// Stores are the named stores of a config file (its stores: section): a URL whose scheme is
// one of the names opens that store, and an entry named after a scheme (s3, gs…) gives the
// defaults of every URL of that scheme.
type Stores map[string]*Named

// Named is one entry of Stores: the backend it uses and its options as written.
type Named struct {
	Backend string // a registered scheme: "s3", "gs", "az"…
	raw     yamlconf.Raw
}

// SetRaw keeps the entry as written, taking its backend: key out of it.
func (n *Named) SetRaw(r yamlconf.Raw) {
	n.raw = r
	if r.Node == nil || r.Node.Kind != yaml.MappingNode {
		return
	}
	c := *r.Node
	c.Content = nil
	for i := 0; i+1 < len(r.Node.Content); i += 2 {
		k, v := r.Node.Content[i], r.Node.Content[i+1]
		if k.Value == "backend" {
			n.Backend = v.Value
			continue
		}
		c.Content = append(c.Content, k, v)
	}
	n.raw.Node = &c
}

// Check validates the named stores: each needs a backend that this build has, a name that is
// not another scheme, and only keys its backend has.
func (st Stores) Check() error {
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range st {
			if !yield(k) {
				return
			}
		}
	}) {
		n := st[name]
		bad := func(format string, a ...any) error {
			e := n.raw.ErrorAt("stores."+name, format, a...)
			return &Error{Op: "config", Key: "stores." + name, Kind: ErrConfig, Err: e}
		}
		if _, _, ok := driver.SplitScheme(name + "://"); !ok || strings.ContainsAny(name, ":/") {
			return bad("%q is not usable as a URL scheme: use letters, digits, '+' and '-'", name)
		}
		_, isScheme := driver.Lookup(name)
		switch {
		case isScheme && n.Backend != "" && n.Backend != name:
			return bad("named after the %s scheme but backend: %s: an entry named after a scheme gives that scheme's defaults", name, n.Backend)
		case isScheme:
			n.Backend = name
		case n.Backend == "":
			return bad("no backend: say which store this is (backend: s3, gs, az, file…)")
		}
		b, ok := driver.Lookup(n.Backend)
		if !ok {
			return bad("backend %q is not one of %s", n.Backend, strings.Join(driver.Schemes(), ", "))
		}
		if err := n.raw.Decode(b.NewOptions()); err != nil { // its keys, strictly, before any is used
			return &Error{Op: "config", Key: "stores." + name, Kind: ErrConfig, Err: err}
		}
	}
	return nil
}

// backend returns the backend and the named store (if any) of a URL scheme.
func (c *Config) backend(scheme string) (*driver.Backend, *Named, error) {
	if c != nil {
		if n, ok := c.Stores[scheme]; ok && n.Backend != "" {
			b, found := driver.Lookup(n.Backend)
			if found {
				return b, n, nil
			}
		}
	}
	b, ok := driver.Lookup(scheme)
	if !ok {
		return nil, nil, &Error{Op: "open", Key: scheme + "://", Kind: driver.ErrEndpointUnsupported,
			Err: fmt.Errorf("scheme %q is not one of %s, nor a store of the config file", scheme, strings.Join(driver.Schemes(), ", "))}
	}
	return b, nil, nil
}

// WriteOnly reports whether loc's backend is a stream that keeps nothing (standard output):
// what is written there cannot be read back, listed or deleted.
func (c *Config) WriteOnly(loc Location) bool {
	b, _, err := c.backend(loc.Scheme)
	return err == nil && b.WriteOnly
}

// ParseURL parses raw as ParseURL does, also reading URLs whose scheme names a store of
// c.Stores.
func (c *Config) ParseURL(raw string) (Location, error) {
	scheme, rest, ok := driver.SplitScheme(raw)
	if ok && c != nil {
		if n, named := c.Stores[scheme]; named {
			if _, isScheme := driver.Lookup(scheme); !isScheme {
				b, _, err := c.backend(scheme)
				if err != nil {
					return Location{}, err
				}
				loc, err := b.Parse(rest)
				if err != nil {
					return Location{}, err
				}
				loc.Scheme = scheme
				_ = n
				return loc, nil
			}
		}
	}
	return driver.ParseURL(raw)
}

// ObjectLocation re-roots loc, which must name one object, as its backend does (a local path
// names a file inside a directory). ok is false when loc names a bucket, a prefix or a
// directory rather than an object.
func (c *Config) ObjectLocation(loc Location) (Location, bool) {
	b, _, err := c.backend(loc.Scheme)
	if err == nil && b.Object != nil {
		loc = b.Object(loc)
	}
	return loc, loc.Key != "" && !strings.HasSuffix(loc.Key, "/")
}

// common returns the settings every backend shares.
func (c *Config) common() *driver.Common {
	return &driver.Common{Getenv: c.Getenv, Allowlist: c.Allowlist, RequireAllow: c.RequireAllow,
		Retry: c.Retry, Logger: c.Logger, CreateDir: c.CreateDir}
}

// options fills the options of loc's backend in the documented order and checks them.
func (c *Config) options(loc Location) (*driver.Backend, driver.Options, *driver.Common, error) {
	if c == nil {
		c = &Config{}
	}
	b, named, err := c.backend(loc.Scheme)
	if err != nil {
		return nil, nil, nil, err
	}
	common := c.common()
	opts := c.Options
	if opts == nil {
		opts = b.NewOptions()
		if e, ok := opts.(driver.EnvDefaults); ok {
			e.FromEnv(common.Env)
		}
		if named != nil {
			if err := named.raw.Decode(opts); err != nil {
				return nil, nil, nil, configErr(loc, err)
			}
		}
		if err := c.raw.Decode(opts); err != nil {
			return nil, nil, nil, configErr(loc, err)
		}
	}
	dec := &yamlconf.Decoder{Getenv: c.Getenv}
	for _, s := range c.Set {
		if err := dec.DecodeKey(opts, s.Name, s.Value, s.Source); err != nil {
			return nil, nil, nil, configErr(loc, fmt.Errorf("%w (the %s store's options are: %s)", err, b.Scheme, optionNames(opts)))
		}
	}
	if err := opts.Check(loc.Root(), common); err != nil {
		return nil, nil, nil, err
	}
	return b, opts, common, nil
}

func optionNames(opts driver.Options) string {
	names := yamlconf.KeysOf(opts)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// configErr makes a decoding failure of loc's options ErrConfig. One from a config file names
// the file, line and key already; one from a flag is given the store it was for.
func configErr(loc Location, err error) error {
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	var ye *yamlconf.Error
	if errors.As(err, &ye) && ye.File != "" {
		return &Error{Op: "config", Kind: ErrConfig, Err: err}
	}
	return &Error{Op: "config", Key: loc.Root().String(), Kind: ErrConfig, Err: err}
}

// Check parses raw and checks the options of its store (endpoint rules, credential references
// and combinations, unknown options) without opening anything.
func Check(raw string, c *Config) error {
	loc, err := c.ParseURL(raw)
	if err != nil {
		return err
	}
	_, _, _, err = c.options(loc)
	return err
}

// Open parses raw and opens its store: the options are filled and checked before any
// connection, the backend's bucket is opened at the URL's root (and decorated by c.Wrap), and
// the returned store serves the keys below the URL's key, as a prefix ("s3://b/logs" serves
// "logs/…").
func Open(ctx context.Context, raw string, c *Config) (*Store, error) {
	loc, err := c.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	return OpenLocation(ctx, loc, c)
}

// OpenLocation is Open for a parsed location.
func OpenLocation(ctx context.Context, loc Location, c *Config) (*Store, error) {
	b, opts, common, err := c.options(loc)
	if err != nil {
		return nil, err
	}
	bucket, err := b.Open(ctx, loc.Root(), opts, common)
	if err != nil {
		return nil, err
	}
	if c != nil && c.Wrap != nil {
		bucket = c.Wrap(bucket)
	}
	return New(bucket, common.RetryPolicy()).Sub(loc.Key), nil
}

// ListBuckets lists the buckets at loc, a location that names none (s3://, gs://,
// az://account/; a named store's scheme too), with c's options and credentials, sorted by
// name. A backend that has no such listing is ErrUnsupported.
func ListBuckets(ctx context.Context, loc Location, c *Config) ([]BucketInfo, error) {
	loc = Location{Scheme: loc.Scheme, Account: loc.Account}
	b, opts, common, err := c.options(loc)
	if err != nil {
		return nil, err
	}
	bucket, err := b.Open(ctx, loc, opts, common)
	if err != nil {
		return nil, err
	}
	defer bucket.Close()
	lister, ok := driver.Find[driver.BucketLister](bucket)
	if !ok {
		return nil, &Error{Op: "list-buckets", Key: loc.String(), Kind: ErrUnsupported, Err: errors.New("this store has no bucket listing")}
	}
	var out []BucketInfo
	err = common.RetryPolicy().Do(ctx, driver.Request{Op: "list-buckets", Key: loc.String(), Replayable: true}, func(ctx context.Context) error {
		out, err = lister.ListBuckets(ctx)
		return err
	})
	slices.SortFunc(out, func(a, b BucketInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, err
}
