package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Opener opens a backend for loc (whose Path is empty: the backend serves the whole bucket,
// container or directory). cfg has passed Config.Check. Openers must not connect more than
// they need to: a missing bucket is found by the first operation, not by Open.
type Opener func(ctx context.Context, loc Location, cfg *Config) (Store, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Opener{}
)

// Register makes a backend available for a URL scheme. Backends call it from init; only
// cmd/wharf imports them. Registering a scheme twice panics.
func Register(scheme string, open Opener) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[scheme]; dup {
		panic(fmt.Sprintf("store: scheme %q registered twice", scheme))
	}
	registry[scheme] = open
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

// Open opens the store at loc: its URL query is merged into cfg, cfg is checked (endpoint,
// allowlist, credentials) before any connection, and the backend is wrapped so that keys are
// validated, the retry policy applies, and every key is below loc.Path (a prefix: "logs"
// serves "logs/…").
func Open(ctx context.Context, loc Location, cfg Config) (Store, error) {
	if err := cfg.ApplyQuery(loc); err != nil {
		return nil, err
	}
	if err := cfg.Check(loc); err != nil {
		return nil, err
	}
	registryMu.RLock()
	open, ok := registry[loc.Scheme]
	registryMu.RUnlock()
	if !ok {
		return nil, &Error{Op: "open", Key: loc.String(), Kind: ErrEndpointUnsupported,
			Err: fmt.Errorf("no backend for scheme %q in this build (have %s)", loc.Scheme, strings.Join(Schemes(), ", "))}
	}
	s, err := open(ctx, loc.Root(), &cfg)
	if err != nil {
		return nil, err
	}
	s = Validate(Retry(s, cfg.RetryPolicy()))
	if p := strings.Trim(loc.Path, "/"); p != "" {
		s = WithPrefix(s, p+"/")
	}
	return s, nil
}

// OpenURL parses raw and opens it with cfg.
func OpenURL(ctx context.Context, raw string, cfg Config) (Store, error) {
	loc, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	return Open(ctx, loc, cfg)
}
