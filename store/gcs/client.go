package gcs

import (
	"context"
	"net/http"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/wharfdata/wharf/store/driver"
)

// defaultEndpoint is Cloud Storage itself.
const defaultEndpoint = "https://storage.googleapis.com"

// target is where a Bucket sends its requests.
type target struct {
	endpoint string // scheme://host[:port], no path
	emulator bool   // an endpoint other than Cloud Storage (from the config or the environment)
	fromEnv  bool   // the endpoint came from STORAGE_EMULATOR_HOST
	// xmlReads reads objects through the XML API, whose answer carries the user metadata (a
	// JSON API read's does not, on Cloud Storage). Emulators read through the JSON API:
	// fake-gcs-server serves path-style XML reads only when the Host is its -public-host, and
	// sends the metadata headers on JSON reads too.
	xmlReads bool
}

// credentialSource says how requests authenticate.
type credentialSource struct {
	anonymous bool
	creds     *auth.Credentials // from a service-account key; nil: application default credentials
	projectID string            // the key's project_id
	key       *serviceAccount   // the key itself, which signs URLs; nil without one
}

// credentialsFor picks the credentials o asks for: none (anonymous, or an emulator named by
// STORAGE_EMULATOR_HOST, as Google's SDKs do), a service-account key read from its reference,
// or else application default credentials, found on first use.
func credentialsFor(o *Options, c *driver.Common, t target) (credentialSource, error) {
	if o.ServiceAccountFile == "" {
		return credentialSource{anonymous: o.Anonymous || t.fromEnv}, nil
	}
	key, err := readServiceAccount(c, o.ServiceAccountFile)
	if err != nil {
		return credentialSource{}, err
	}
	creds, err := key.credentials(detectOptions(c.RetryPolicy()))
	if err != nil {
		return credentialSource{}, err
	}
	return credentialSource{creds: creds, projectID: key.projectID, key: key}, nil
}

// detectOptions are the options of Google's auth library: the scope wharf needs (read and write
// objects, create buckets), and token requests over wharf's HTTP client.
func detectOptions(policy *driver.RetryPolicy) *credentials.DetectOptions {
	return &credentials.DetectOptions{Scopes: []string{storage.ScopeFullControl}, Client: driver.NewHTTPClient(policy)}
}

// newClient builds the SDK client: one HTTP request per call (the SDK's retries off, and a
// Get's reader never reopens a body on its own), over driver.NewHTTPClient under the
// authorization layer, at exactly the endpoint t names. The SDK reads STORAGE_EMULATOR_HOST
// itself; passing the endpoint and the HTTP client explicitly makes its reading a no-op, so
// targetFor's checked answer is the only one.
func newClient(ctx context.Context, c *driver.Common, t target, cs credentialSource) (*storage.Client, *authTransport, error) {
	policy := c.RetryPolicy()
	base := driver.NewHTTPClient(policy).Transport
	var at *authTransport
	if !cs.anonymous {
		at = &authTransport{base: base, detect: detector(cs, policy)}
		base = at
	}
	hc := &http.Client{Transport: guardTransport{base: base}}
	reads := storage.WithJSONReads()
	if t.xmlReads {
		reads = storage.WithXMLReads()
	}
	client, err := storage.NewClient(ctx,
		option.WithHTTPClient(hc),
		option.WithoutAuthentication(), // auth is in hc; the SDK must not look for credentials itself
		option.WithEndpoint(t.endpoint+"/storage/v1/"),
		reads,
		storage.WithDisabledClientMetrics(), // no telemetry leaves the machine
	)
	if err != nil {
		return nil, nil, &driver.Error{Op: "open", Key: t.endpoint, Kind: driver.ErrConfig, Err: err}
	}
	// Every SDK retry off. storage.RetryNever alone is not enough: with it the SDK gives a
	// resumable upload no retry settings, and the upload library then retries chunks with its
	// own defaults (5xx, 429, 408, up to 32 s per chunk). "Always retry, if the error says so"
	// with an error test that never says so reaches every path, chunks included.
	client.SetRetry(storage.WithPolicy(storage.RetryAlways), storage.WithErrorFunc(func(error) bool { return false }))
	return client, at, nil
}

// detector returns how authTransport finds its credentials on first use.
func detector(cs credentialSource, policy *driver.RetryPolicy) func() (*auth.Credentials, error) {
	if cs.creds != nil {
		return func() (*auth.Credentials, error) { return cs.creds, nil }
	}
	return func() (*auth.Credentials, error) { return credentials.DetectDefault(detectOptions(policy)) }
}
