package driver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/secret"
)

// Options are one backend's typed options: a pointer to a struct with yaml tags (endpoint,
// region, credential references…). Package store fills them in one order for every backend —
// the struct's defaults, then the environment (EnvDefaults), then the config file, then the
// flags — and calls Check before Open.
type Options interface {
	// Check validates the options for loc before any connection: endpoint rules (CheckEndpoint),
	// credential combinations, and that credential fields hold references.
	Check(loc Location, c *Common) error
}

// EnvDefaults is implemented by options that take defaults from the conventional environment
// of the store's own tools (AWS_REGION for S3, STORAGE_EMULATOR_HOST for GCS…). getenv is the
// one way a backend reads the environment: the process's, as cmd/wharf passes it, or a test's.
type EnvDefaults interface {
	FromEnv(getenv func(string) string)
}

// Common are the settings every backend shares, given by the program that opens the store.
type Common struct {
	// Getenv reads the environment: the SDK-standard variables a backend documents, and
	// env:// credential references. Nil reads nothing (every variable unset).
	Getenv func(string) string
	// Allowlist of endpoint host patterns (WHARF_ENDPOINT_ALLOWLIST); empty allows any.
	Allowlist []string
	// RequireAllow makes a custom endpoint on a host that is not loopback need an allow-list
	// entry even when Allowlist is empty (an export destination, by the export contract).
	RequireAllow bool
	Retry        *RetryPolicy // nil: DefaultRetryPolicy
	Logger       *slog.Logger // nil: discard
	// CreateDir asks a backend whose root is a local directory to make it on its first
	// write, and to read a missing one as an empty store (no object, an empty listing)
	// rather than ErrBucketMissing. Backends whose roots are buckets ignore it: a missing
	// bucket stays an error and is never created.
	CreateDir bool
}

// Env returns the value of the environment variable name, or "".
func (c *Common) Env(name string) string {
	if c == nil || c.Getenv == nil {
		return ""
	}
	return c.Getenv(name)
}

// RetryPolicy returns c.Retry or the default policy.
func (c *Common) RetryPolicy() *RetryPolicy {
	if c != nil && c.Retry != nil {
		return c.Retry
	}
	return DefaultRetryPolicy()
}

// Log returns c.Logger or a logger that discards.
func (c *Common) Log() *slog.Logger {
	if c != nil && c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Resolve reads the credential reference ref (env://NAME or file:///path) given for field,
// mapping failures to ErrCredentialLiteral and ErrCredentialUnbound.
func (c *Common) Resolve(field, ref string) (secret.Value, error) {
	v, err := secret.Resolve(field, ref, c.Env)
	if err == nil {
		return v, nil
	}
	kind := ErrCredentialUnbound
	if errors.Is(err, secret.ErrLiteral) {
		kind = ErrCredentialLiteral
	}
	return secret.Value{}, &Error{Op: "config", Key: field, Kind: kind, Err: err}
}

// CheckRefs refuses a credential field that holds a literal instead of a reference. fields
// pairs each field's name with its value.
func CheckRefs(fields ...[2]string) error {
	for _, f := range fields {
		if f[1] != "" && !secret.IsRef(f[1]) {
			return &Error{Op: "config", Key: f[0], Kind: ErrCredentialLiteral,
				Err: fmt.Errorf("field %s holds a literal: write env://NAME or file:///path", f[0])}
		}
	}
	return nil
}

// CheckEndpoint applies the endpoint rules before any connection: no user information
// (user:password@) in it, only http and https, http only on a loopback host (127.0.0.0/8, ::1,
// localhost); when the allowlist is not empty, a host matching one of its patterns
// ("*.example.com", "10.0.0.5", "minio.internal"); and with c.RequireAllow a host that is not
// loopback must match the allowlist even when it is empty. source names where the endpoint
// came from ("--endpoint", "AWS_ENDPOINT_URL"…) for messages, which never show a password.
func (c *Common) CheckEndpoint(source, endpoint string) error {
	return c.CheckEndpointWaived(source, endpoint, Waivers{})
}

// Waivers are a store's own waivers of the endpoint rules, each set on purpose in its
// section of the config file.
type Waivers struct {
	// AllowHTTP (allow_http) lets an http:// endpoint on a host that is not loopback be used
	// (a docker-compose http://minio:9000): everything sent, credentials' signatures and data
	// alike, crosses the network in plain text, so a warning is logged at every open.
	AllowHTTP bool
	// AllowAnonymous (allow_anonymous), for a store that sends no credentials (Anonymous),
	// waives RequireAllow: a public bucket at a custom endpoint outside this machine needs no
	// allow-list entry, since no credential can leave with the request. An explicit
	// Allowlist still applies.
	AllowAnonymous bool
	Anonymous      bool // the store's anonymous: true
}

// CheckEndpointWaived is CheckEndpoint with a store's waivers w. allow_anonymous without
// anonymous is ErrCredentialConflict: it waives the guard only for a store that sends no
// credentials.
func (c *Common) CheckEndpointWaived(source, endpoint string, w Waivers) error {
	if w.AllowAnonymous && !w.Anonymous {
		return &Error{Op: "config", Key: "allow_anonymous", Kind: ErrCredentialConflict,
			Err: errors.New("allow_anonymous waives the endpoint guard only for a store that sends no credentials: set anonymous: true too, or leave it out")}
	}
	if endpoint == "" {
		return nil
	}
	shown := RedactURL(endpoint)
	bad := func(kind *errcode.Code, format string, a ...any) error {
		key := shown
		if source != "" {
			key = source + " " + shown
		}
		return &Error{Op: "endpoint", Key: key, Kind: kind, Err: fmt.Errorf(format, a...)}
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		if hasUserinfo(endpoint) {
			return bad(ErrCredentialLiteral, "user information in the endpoint: give credentials as references in the config")
		}
		return bad(ErrEndpointUnsupported, "not an http(s) URL with a host")
	}
	if u.User != nil {
		return bad(ErrCredentialLiteral, "user information in the endpoint: give credentials as references in the config")
	}
	host := u.Hostname()
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		switch {
		case IsLoopback(host):
		case w.AllowHTTP:
			c.Log().Warn("allow_http: a plaintext endpoint outside this machine; requests and data cross the network unencrypted",
				"endpoint", shown, "source", source)
		default:
			return bad(ErrEndpointInsecure, "host %s is not loopback: use https, or set allow_http: true in the store's section to use it on purpose", host)
		}
	default:
		return bad(ErrEndpointUnsupported, "scheme %q: use https (or http on loopback)", u.Scheme)
	}
	var allow []string
	if c != nil {
		allow = c.Allowlist
	}
	switch {
	case len(allow) > 0 && !hostAllowed(host, allow):
		return bad(ErrEndpointNotAllowed, "host %s matches none of %s", host, strings.Join(allow, ","))
	case len(allow) == 0 && c != nil && c.RequireAllow && !IsLoopback(host) && !w.AllowAnonymous:
		return bad(ErrEndpointNotAllowed, "host %s is a custom endpoint outside this machine: allow it with WHARF_ENDPOINT_ALLOWLIST=%s (or endpoint_allowlist in the config file)", host, host)
	}
	return nil
}

// IsLoopback reports whether host is localhost or an address in 127.0.0.0/8 or ::1.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func hostAllowed(host string, patterns []string) bool {
	host = strings.ToLower(host)
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		switch {
		case p == "":
		case p == host:
			return true
		case strings.HasPrefix(p, "*.") && strings.HasSuffix(host, p[1:]):
			return true
		}
	}
	return false
}

// ParseAllowlist splits the comma-separated value of WHARF_ENDPOINT_ALLOWLIST.
func ParseAllowlist(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// hasUserinfo reports whether the authority of a URL-like string holds an '@'.
func hasUserinfo(raw string) bool {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		rest = raw
	}
	host, _, _ := strings.Cut(rest, "/")
	return strings.Contains(host, "@")
}

// RedactURL replaces the user:password part of a URL, if any, with [REDACTED], so that it
// never reaches a message.
func RedactURL(raw string) string {
	prefix, rest := "", raw
	if scheme, r, ok := strings.Cut(raw, "://"); ok {
		prefix, rest = scheme+"://", r
	}
	authority, path, hasPath := strings.Cut(rest, "/")
	i := strings.LastIndex(authority, "@")
	if i < 0 {
		return raw
	}
	out := prefix + "[REDACTED]@" + authority[i+1:]
	if hasPath {
		out += "/" + path
	}
	return out
}
