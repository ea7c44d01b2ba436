package main

import (
	"errors"
	"testing"

	"github.com/wharfdata/wharf/store"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func mustLoc(t *testing.T, raw string) store.Location {
	t.Helper()
	loc, err := store.ParseURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// effective returns the endpoint and region store.Open would use: the config with the
// adjusted query merged over it.
func effective(t *testing.T, a *app, raw string) store.Config {
	t.Helper()
	loc, cfg := a.storeConfig(mustLoc(t, raw))
	if err := cfg.ApplyQuery(loc); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestStoreConfigPrecedence(t *testing.T) {
	env := envOf(map[string]string{
		"AWS_ENDPOINT_URL_S3": "https://s3.env.example", "AWS_ENDPOINT_URL": "https://generic.env.example",
		"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-east-2",
	})
	tests := []struct {
		name, raw, flagEndpoint, flagRegion string
		wantEndpoint, wantRegion            string
	}{
		{"env", "s3://b/k", "", "", "https://s3.env.example", "eu-west-1"},
		{"query over env", "s3://b/k?endpoint=https://q.example&region=q-1", "", "", "https://q.example", "q-1"},
		{"flag over query", "s3://b/k?endpoint=https://q.example&region=q-1", "https://flag.example", "f-1", "https://flag.example", "f-1"},
		{"env only for s3", "mem://m/k", "", "", "", ""},
	}
	for _, tt := range tests {
		a := &app{getenv: env, endpoint: tt.flagEndpoint, region: tt.flagRegion}
		cfg := effective(t, a, tt.raw)
		if cfg.Endpoint != tt.wantEndpoint || cfg.Region != tt.wantRegion {
			t.Errorf("%s: endpoint %q region %q; want %q %q", tt.name, cfg.Endpoint, cfg.Region, tt.wantEndpoint, tt.wantRegion)
		}
	}
}

func TestStoreConfigFallbacks(t *testing.T) {
	a := &app{getenv: envOf(map[string]string{"AWS_ENDPOINT_URL": "https://generic.example", "AWS_DEFAULT_REGION": "us-east-2"})}
	cfg := effective(t, a, "s3://b")
	if cfg.Endpoint != "https://generic.example" || cfg.Region != "us-east-2" {
		t.Errorf("got endpoint %q region %q", cfg.Endpoint, cfg.Region)
	}
}

func TestStoreConfigAnonymousFlagWins(t *testing.T) {
	a := &app{getenv: envOf(nil), anonymous: true}
	if cfg := effective(t, a, "s3://b?anonymous=false"); !cfg.Anonymous {
		t.Error("--anonymous lost to ?anonymous=false")
	}
}

func TestStoreConfigEndpointChecks(t *testing.T) {
	tests := []struct {
		env  map[string]string
		flag string
		want error
	}{
		{map[string]string{"AWS_ENDPOINT_URL": "http://minio.internal:9000"}, "", store.ErrEndpointInsecure},
		{nil, "http://10.1.2.3:9000", store.ErrEndpointInsecure},
		{map[string]string{"WHARF_ENDPOINT_ALLOWLIST": "s3.example.com, *.corp.example"}, "https://evil.example", store.ErrEndpointNotAllowed},
		{map[string]string{"WHARF_ENDPOINT_ALLOWLIST": "s3.example.com, *.corp.example"}, "https://minio.corp.example", nil},
		{nil, "http://127.0.0.1:9000", nil},
	}
	for _, tt := range tests {
		a := &app{getenv: envOf(tt.env), endpoint: tt.flag}
		loc, cfg := a.storeConfig(mustLoc(t, "s3://b/k"))
		err := cfg.Check(loc)
		if !errors.Is(err, tt.want) {
			t.Errorf("env %v flag %q: Check = %v, want %v", tt.env, tt.flag, err, tt.want)
		}
	}
}
