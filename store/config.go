package store

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/wharfdata/wharf/internal/secret"
)

// Config holds the typed options for opening a store. The CLI fills it from flags, the config
// file, the URL's query and the environment; libraries never read those themselves.
type Config struct {
	Endpoint  string // https://host[:port], or http:// on loopback only
	Region    string
	Anonymous bool // send no credentials

	// Credentials is "" (keys below, or the SDK's default chain when none are given) or
	// "role" (workload-role credentials only).
	Credentials string

	// References (env://NAME, file:///path) to credentials, never literals.
	AccessKeyID        string
	SecretAccessKey    string
	SessionToken       string
	AccountKey         string // Azure
	SASToken           string // Azure
	ServiceAccountFile string // GCS: a reference to the JSON key file

	// Allowlist of endpoint host patterns (WHARF_ENDPOINT_ALLOWLIST); empty allows any.
	Allowlist []string

	Retry       *RetryPolicy // nil: DefaultRetryPolicy
	PartSize    int64        // multipart part size; 0: backend default
	Concurrency int          // parts in flight per upload; 0: backend default

	Logger *slog.Logger // nil: discard
}

// ApplyQuery merges the URL's query parameters (endpoint, region, anonymous) into c. A query
// parameter overrides what c already has. Unknown parameters are an error naming them.
func (c *Config) ApplyQuery(loc Location) error {
	for k, vs := range loc.Query {
		v := vs[len(vs)-1]
		switch k {
		case "endpoint":
			c.Endpoint = v
		case "region":
			c.Region = v
		case "anonymous":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return &Error{Op: "parse-url", Key: loc.String(), Kind: ErrConfig, Err: fmt.Errorf("anonymous=%q: want true or false", v)}
			}
			c.Anonymous = b
		default:
			return &Error{Op: "parse-url", Key: loc.String(), Kind: ErrConfig,
				Err: fmt.Errorf("unknown query parameter %q (known: endpoint, region, anonymous)", k)}
		}
	}
	return nil
}

// Check validates c for loc before any connection: the endpoint rules, the credential
// combinations, and that every credential is a reference.
func (c *Config) Check(loc Location) error {
	if err := CheckEndpoint(c.Endpoint, c.Allowlist); err != nil {
		return err
	}
	for _, f := range c.credentialFields() {
		if f.ref != "" && !secret.IsRef(f.ref) {
			return &Error{Op: "config", Key: f.name, Kind: ErrCredentialLiteral,
				Err: fmt.Errorf("field %s holds a literal: write env://NAME or file:///path", f.name)}
		}
	}
	keys := c.AccessKeyID != "" || c.SecretAccessKey != "" || c.SessionToken != ""
	switch {
	case c.Credentials != "" && c.Credentials != "role":
		return &Error{Op: "config", Key: "credentials", Kind: ErrConfig,
			Err: fmt.Errorf("credentials: %q is not a mode (want role, or leave it out)", c.Credentials)}
	case c.Credentials == "role" && (keys || c.Anonymous):
		return &Error{Op: "config", Key: "credentials", Kind: ErrCredentialConflict,
			Err: fmt.Errorf("credentials: role beside access keys or anonymous for %s: give one", loc)}
	case c.Credentials == "role" && loc.Scheme == "r2":
		return &Error{Op: "config", Key: "credentials", Kind: ErrCredentialConflict,
			Err: fmt.Errorf("credentials: role is not available for R2 (%s)", loc)}
	case c.Anonymous && (keys || c.AccountKey != "" || c.SASToken != "" || c.ServiceAccountFile != ""):
		return &Error{Op: "config", Key: "anonymous", Kind: ErrCredentialConflict,
			Err: fmt.Errorf("anonymous cannot be combined with credentials (%s given): give one", strings.Join(c.givenCredentials(), ", "))}
	case c.AccountKey != "" && c.SASToken != "":
		return &Error{Op: "config", Key: "account_key", Kind: ErrCredentialConflict,
			Err: errors.New("account_key and sas_token are mutually exclusive: give one of account_key or sas_token")}
	case (c.AccessKeyID == "") != (c.SecretAccessKey == ""):
		return &Error{Op: "config", Key: "access_key_id", Kind: ErrCredentialUnbound,
			Err: errors.New("access_key_id and secret_access_key must be given together")}
	}
	return nil
}

type credField struct{ name, ref string }

// givenCredentials names the credential fields c sets (never their values).
func (c *Config) givenCredentials() []string {
	var out []string
	for _, f := range c.credentialFields() {
		if f.ref != "" {
			out = append(out, f.name)
		}
	}
	return out
}

func (c *Config) credentialFields() []credField {
	return []credField{
		{"access_key_id", c.AccessKeyID},
		{"secret_access_key", c.SecretAccessKey},
		{"session_token", c.SessionToken},
		{"account_key", c.AccountKey},
		{"sas_token", c.SASToken},
		{"service_account_file", c.ServiceAccountFile},
	}
}

// Resolve reads the credential reference given for field, mapping failures to
// ErrCredentialLiteral and ErrCredentialUnbound. Backends call it when they open.
func Resolve(field, ref string) (secret.Value, error) {
	v, err := secret.Resolve(field, ref)
	if err == nil {
		return v, nil
	}
	kind := ErrCredentialUnbound
	if errors.Is(err, secret.ErrLiteral) {
		kind = ErrCredentialLiteral
	}
	return secret.Value{}, &Error{Op: "config", Key: field, Kind: kind, Err: err}
}

// RetryPolicy returns c.Retry or the default policy.
func (c *Config) RetryPolicy() *RetryPolicy {
	if c.Retry != nil {
		return c.Retry
	}
	return DefaultRetryPolicy()
}

// Log returns c.Logger or a logger that discards.
func (c *Config) Log() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}
