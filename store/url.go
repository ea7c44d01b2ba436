package store

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
)

// Location is a parsed store URL.
type Location struct {
	Scheme string // "file", "s3", "r2", "gs", "az", "mem", "stdout"
	// Bucket is the bucket (s3, r2, gs), the container (az), the store name (mem), or the
	// absolute directory (file).
	Bucket string
	// Account is the R2 account id or the Azure storage account.
	Account string
	// Path is the key or prefix inside the bucket, without a leading '/'. A trailing '/' is
	// kept: it tells a prefix from a key. Always empty for file.
	Path string
	// Query holds the URL's query parameters (endpoint, region, anonymous).
	Query url.Values
}

// String returns the URL without its query.
func (l Location) String() string {
	switch l.Scheme {
	case "file":
		return "file://" + filepath.ToSlash(l.Bucket)
	case "stdout":
		return "stdout://"
	case "r2", "az":
		return joinURL(l.Scheme+"://"+l.Account+"/"+l.Bucket, l.Path)
	}
	return joinURL(l.Scheme+"://"+l.Bucket, l.Path)
}

func joinURL(base, path string) string {
	if path == "" {
		return base
	}
	return base + "/" + path
}

// Root returns the location with Path cleared: the bucket itself.
func (l Location) Root() Location {
	l.Path = ""
	return l
}

// ParseURL parses a store URL (see the package doc for the forms). It only parses: no
// credential is read and no connection made. An unknown scheme is ErrEndpointUnsupported.
func ParseURL(raw string) (Location, error) {
	bad := func(kind *Kind, format string, a ...any) (Location, error) {
		return Location{}, &Error{Op: "parse-url", Key: redactUserinfo(raw), Kind: kind, Err: fmt.Errorf(format, a...)}
	}
	if raw == "" {
		return bad(ErrEndpointUnsupported, "empty URL")
	}
	if raw == "-" || raw == "stdout://" || raw == "stdout:" {
		return Location{Scheme: "stdout"}, nil
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || strings.ContainsAny(scheme, "/.\\") {
		// A plain path: the local filesystem.
		abs, err := filepath.Abs(raw)
		if err != nil {
			return bad(ErrConfig, "path: %v", err)
		}
		return Location{Scheme: "file", Bucket: abs}, nil
	}
	scheme = strings.ToLower(scheme)
	switch scheme {
	case "file":
		if !strings.HasPrefix(rest, "/") {
			return bad(ErrConfig, "file URL must be absolute: file:///dir")
		}
		return Location{Scheme: "file", Bucket: filepath.Clean(filepath.FromSlash(rest))}, nil
	case "s3", "gs", "mem", "r2", "az":
	default:
		return bad(ErrEndpointUnsupported, "scheme %q is not one of file, s3, r2, gs, az, mem, stdout", scheme)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad(ErrConfig, "%v", err)
	}
	if u.User != nil {
		return bad(ErrCredentialLiteral, "credentials in the URL: give references in the config instead")
	}
	loc := Location{Scheme: scheme, Bucket: u.Host, Query: u.Query()}
	path := strings.TrimPrefix(u.Path, "/")
	if scheme == "r2" || scheme == "az" {
		loc.Account = u.Host
		loc.Bucket, path, _ = strings.Cut(path, "/")
		if loc.Account == "" || loc.Bucket == "" {
			what := map[string]string{"r2": "r2://account-id/bucket/prefix", "az": "az://account/container/prefix"}[scheme]
			return bad(ErrConfig, "expected %s", what)
		}
	}
	if loc.Bucket == "" {
		return bad(ErrConfig, "no bucket: expected %s://bucket/prefix", scheme)
	}
	loc.Path = path
	return loc, nil
}

// CheckEndpoint applies the endpoint rules before any connection: only http and https; http
// only on a loopback host (127.0.0.0/8, ::1, localhost); and, when allowlist is not empty, a
// host matching one of its patterns ("*.example.com", "10.0.0.5", "minio.internal").
func CheckEndpoint(endpoint string, allowlist []string) error {
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return &Error{Op: "endpoint", Key: endpoint, Kind: ErrEndpointUnsupported,
			Err: fmt.Errorf("not an http(s) URL with a host")}
	}
	host := u.Hostname()
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !IsLoopback(host) {
			return &Error{Op: "endpoint", Key: endpoint, Kind: ErrEndpointInsecure,
				Err: fmt.Errorf("host %s is not loopback: use https", host)}
		}
	default:
		return &Error{Op: "endpoint", Key: endpoint, Kind: ErrEndpointUnsupported,
			Err: fmt.Errorf("scheme %q: use https (or http on loopback)", u.Scheme)}
	}
	if len(allowlist) > 0 && !hostAllowed(host, allowlist) {
		return &Error{Op: "endpoint", Key: endpoint, Kind: ErrEndpointNotAllowed,
			Err: fmt.Errorf("host %s matches none of %s", host, strings.Join(allowlist, ","))}
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

// redactUserinfo replaces the user:password part of a URL, if any, so that it never reaches
// an error message.
func redactUserinfo(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	host, path, _ := strings.Cut(rest, "/")
	if i := strings.LastIndex(host, "@"); i >= 0 {
		host = "[REDACTED]@" + host[i+1:]
		rest = host
		if path != "" || strings.Contains(raw[len(scheme)+3:], "/") {
			rest += "/" + path
		}
	}
	return scheme + "://" + rest
}
