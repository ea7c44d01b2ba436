package gcs

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/auth/httptransport"

	"github.com/wharfdata/wharf/store/driver"
)

// serviceAccountField is the config field that holds the key file's reference.
const serviceAccountField = "service_account_file"

// serviceAccount is a service-account JSON key read from its reference and checked.
type serviceAccount struct {
	ref       string // env://NAME or file:///path: what errors name
	json      []byte
	projectID string
	// email and privateKey sign URLs (PresignGet) with no request.
	email      string
	privateKey []byte
}

// readServiceAccount resolves ref and checks that it holds a service-account key: JSON, type
// "service_account", a client_email and a PEM private_key that parses. Every error names the
// field, the reference (the variable or the path) and the JSON field at fault, never a byte
// of the content: parse errors of encoding/json quote the offending character, so only their
// offset is kept.
func readServiceAccount(c *driver.Common, ref string) (*serviceAccount, error) {
	v, err := c.Resolve(serviceAccountField, ref)
	if err != nil {
		return nil, err
	}
	b := []byte(v.Reveal())
	bad := func(format string, a ...any) error {
		return &driver.Error{Op: "config", Key: serviceAccountField, Kind: driver.ErrConfig,
			Err: fmt.Errorf("%s %s: %s", serviceAccountField, ref, fmt.Sprintf(format, a...))}
	}
	var f struct {
		Type        *string `json:"type"`
		ProjectID   *string `json:"project_id"`
		PrivateKey  *string `json:"private_key"`
		ClientEmail *string `json:"client_email"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return nil, bad("not a JSON key file (syntax error at byte %d)", syn.Offset)
		case errors.As(err, &typ) && typ.Field != "":
			return nil, bad("field %s is not a string", typ.Field)
		default:
			return nil, bad("not a JSON object")
		}
	}
	switch {
	case f.Type == nil:
		return nil, bad(`field type is missing (want "service_account")`)
	case *f.Type != "service_account":
		return nil, bad(`field type is not "service_account": only service-account keys are accepted here (leave %s out to use application default credentials)`, serviceAccountField)
	case f.ClientEmail == nil || *f.ClientEmail == "":
		return nil, bad("field client_email is missing")
	case f.PrivateKey == nil || *f.PrivateKey == "":
		return nil, bad("field private_key is missing")
	case !privateKeyParses(*f.PrivateKey):
		return nil, bad("field private_key is not a PEM-encoded PKCS#8 or PKCS#1 private key")
	}
	sa := &serviceAccount{ref: ref, json: b, email: *f.ClientEmail, privateKey: []byte(*f.PrivateKey)}
	if f.ProjectID != nil {
		sa.projectID = *f.ProjectID
	}
	return sa, nil
}

func privateKeyParses(s string) bool {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return false
	}
	if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		return true
	}
	_, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	return err == nil
}

// credentials builds the token source of the key. The library's own error is not passed on:
// it is not guaranteed to leave the key's content out.
func (sa *serviceAccount) credentials(opts *credentials.DetectOptions) (*auth.Credentials, error) {
	c, err := credentials.NewCredentialsFromJSON(credentials.ServiceAccount, sa.json, opts)
	if err != nil {
		return nil, &driver.Error{Op: "config", Key: serviceAccountField, Kind: driver.ErrConfig,
			Err: fmt.Errorf("%s %s: the Google auth library refused the key", serviceAccountField, sa.ref)}
	}
	return c, nil
}

// authTransport sets the Authorization header on every request from credentials found on first
// use: application default credentials may ask the metadata server, and Open connects to
// nothing. A failure to find credentials or a token is a *credentialsError.
type authTransport struct {
	base   http.RoundTripper
	detect func() (*auth.Credentials, error)

	once  sync.Once
	creds *auth.Credentials
	err   error
}

// credentialsError is a failure to find credentials or to get a token with them.
type credentialsError struct{ err error }

func (e *credentialsError) Error() string { return "no usable Google credentials: " + e.err.Error() }
func (e *credentialsError) Unwrap() error { return e.err }

func (t *authTransport) credentials() (*auth.Credentials, error) {
	t.once.Do(func() { t.creds, t.err = t.detect() })
	return t.creds, t.err
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	creds, err := t.credentials()
	if err == nil {
		var tok *auth.Token
		if tok, err = creds.Token(req.Context()); err == nil {
			r := req.Clone(req.Context())
			httptransport.SetAuthHeader(tok, r)
			return t.base.RoundTrip(r)
		}
	}
	if req.Body != nil {
		req.Body.Close()
	}
	var se *driver.Error
	if errors.As(err, &se) {
		return nil, err
	}
	return nil, &credentialsError{err: err}
}
