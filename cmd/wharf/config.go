package main

import (
	"context"
	"fmt"
	"maps"
	"net/url"

	"github.com/wharfdata/wharf/store"
)

// Environment variables the CLI reads.
const (
	envAllowlist     = "WHARF_ENDPOINT_ALLOWLIST"
	envEndpointS3    = "AWS_ENDPOINT_URL_S3"
	envEndpoint      = "AWS_ENDPOINT_URL"
	envRegion        = "AWS_REGION"
	envDefaultRegion = "AWS_DEFAULT_REGION"
)

// storeConfig builds the store.Config for loc from the global flags and the environment, and
// returns loc with its query adjusted so that flags win. The order, highest first:
//
//	endpoint: --endpoint, the URL's ?endpoint=, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL (s3 only)
//	region:   --region, the URL's ?region=, AWS_REGION, AWS_DEFAULT_REGION (s3 only)
//	anonymous: --anonymous, the URL's ?anonymous=
//
// store.Open merges the query over the config, so an environment value goes into the config
// and a flag removes the query parameter it overrides. The endpoint is put into cfg.Endpoint
// whatever its source, so store.Config.Check applies the loopback and allowlist rules to it.
// Credentials are left empty: the S3 backend then uses the SDK's default chain.
func (a *app) storeConfig(loc store.Location) (store.Location, store.Config) {
	cfg := store.Config{
		Allowlist: store.ParseAllowlist(a.getenv(envAllowlist)),
		Logger:    a.log,
	}
	if loc.Scheme == "s3" {
		cfg.Endpoint = firstSet(a.getenv(envEndpointS3), a.getenv(envEndpoint))
		cfg.Region = firstSet(a.getenv(envRegion), a.getenv(envDefaultRegion))
	}
	q := maps.Clone(loc.Query)
	if q == nil {
		q = url.Values{}
	}
	if a.endpoint != "" {
		cfg.Endpoint = a.endpoint
		q.Del("endpoint")
	}
	if a.region != "" {
		cfg.Region = a.region
		q.Del("region")
	}
	if a.anonymous {
		cfg.Anonymous = true
		q.Del("anonymous")
	}
	loc.Query = q
	return loc, cfg
}

func firstSet(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// open opens the store at loc with the configuration of storeConfig.
func (a *app) open(ctx context.Context, loc store.Location) (store.Store, error) {
	loc, cfg := a.storeConfig(loc)
	s, err := store.Open(ctx, loc, cfg)
	if err == nil {
		a.log.Debug("opened store", "url", loc.String(), "endpoint_host", hostOf(cfg.Endpoint), "region", cfg.Region)
	}
	return s, err
}

// openObject opens the store that holds the object raw names and returns it with the key.
// An error names raw. The caller closes the store.
func (a *app) openObject(ctx context.Context, raw string) (store.Store, string, error) {
	t, err := splitObject(raw)
	if err != nil {
		return nil, "", err
	}
	s, err := a.open(ctx, t.loc)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", raw, err)
	}
	return s, t.key, nil
}

// hostOf is the host of an endpoint URL, for logs: never its user info or query.
func hostOf(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	return u.Host
}
