package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/wharfdata/wharf/internal/yamlconf"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/azure"
	"github.com/wharfdata/wharf/store/driver"
	_ "github.com/wharfdata/wharf/store/file"
	_ "github.com/wharfdata/wharf/store/gcs"
	_ "github.com/wharfdata/wharf/store/mem"
	"github.com/wharfdata/wharf/store/s3"
	_ "github.com/wharfdata/wharf/store/stdout"
)

func TestParseURL(t *testing.T) {
	wd, _ := os.Getwd()
	cases := []struct {
		in                        string
		scheme, bucket, acct, key string
	}{
		{"s3://bkt/logs/2024/", "s3", "bkt", "", "logs/2024/"},
		{"s3://bkt", "s3", "bkt", "", ""},
		{"gs://b/p", "gs", "b", "", "p"},
		{"r2://acct123/bkt/p/q", "r2", "bkt", "acct123", "p/q"},
		{"az://acct/cont/x", "az", "cont", "acct", "x"},
		{"mem://demo/x", "mem", "demo", "", "x"},
		{"file:///tmp/wharf-no-such-dir/data", "file", "/tmp/wharf-no-such-dir/data", "", ""},
		{"/tmp/wharf-no-such-dir/data", "file", "/tmp/wharf-no-such-dir/data", "", ""},
		{"./rel/dir", "file", filepath.Join(wd, "rel/dir"), "", ""},
		// Written ./…, a path that reads like a URL is a local path; so are a drive letter's
		// and a colon elsewhere.
		{"./s3:/bkt/x", "file", filepath.Join(wd, "s3:/bkt/x"), "", ""},
		{"C:/data", "file", filepath.Join(wd, "C:/data"), "", ""},
		{"rel/a:/b", "file", filepath.Join(wd, "rel/a:/b"), "", ""},
		{"report:2024.csv", "file", filepath.Join(wd, "report:2024.csv"), "", ""},
		{"-", "stdout", "", "", ""},
		{"stdout://", "stdout", "", "", ""},
		// A key is what the user typed, byte for byte.
		{"s3://b/report#v2", "s3", "b", "", "report#v2"},
		{"s3://b/dir%2Ffile", "s3", "b", "", "dir%2Ffile"},
		{"s3://b/k/pct%20enc.txt", "s3", "b", "", "k/pct%20enc.txt"},
		{"s3://b/q?mark&amp=1.txt", "s3", "b", "", "q?mark&amp=1.txt"},
		{"gs://b/x y+z@1.csv", "gs", "b", "", "x y+z@1.csv"},
		{"az://acct/cont/#hash?q", "az", "cont", "acct", "#hash?q"},
	}
	for _, c := range cases {
		loc, err := store.ParseURL(c.in)
		if err != nil {
			t.Errorf("ParseURL(%q): %v", c.in, err)
			continue
		}
		if loc.Scheme != c.scheme || loc.Bucket != c.bucket || loc.Account != c.acct || loc.Key != c.key {
			t.Errorf("ParseURL(%q) = %+v", c.in, loc)
		}
		if back, err := store.ParseURL(loc.String()); err != nil || back != loc {
			t.Errorf("ParseURL(%q).String() = %q reads back as %+v, %v", c.in, loc.String(), back, err)
		}
	}
	for in, kind := range map[string]error{
		"ftp://host/x":                            driver.ErrEndpointUnsupported,
		"hdfs://nn/x":                             driver.ErrEndpointUnsupported,
		"s3://user:pw@bkt/x":                      driver.ErrCredentialLiteral,
		"s3:///nobucket":                          store.ErrConfig,
		"r2://onlyaccount":                        store.ErrConfig,
		"file://relative/dir":                     store.ErrConfig,
		"s3://bkt?endpoint=http://127.0.0.1:9000": store.ErrConfig,
		"stdout://x":                              store.ErrConfig,
		// One slash short of a URL: refused, not taken for ./s3:/bkt/x.
		"s3:/bkt/x":   store.ErrConfig,
		"gs:/b/":      store.ErrConfig,
		"S3:/b":       store.ErrConfig,
		"minio+s3:/b": store.ErrConfig,
	} {
		_, err := store.ParseURL(in)
		if !errors.Is(err, kind) {
			t.Errorf("ParseURL(%q) = %v, want %v", in, err, kind)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("error repeats the credential: %v", err)
		}
	}
}

func TestOptionsChecked(t *testing.T) {
	cases := []struct {
		name string
		url  string
		opts driver.Options
		kind error
		says string
	}{
		{"literal secret", "s3://b", &s3.Options{AccessKeyID: "env://A", SecretAccessKey: "hunter2-literal"}, driver.ErrCredentialLiteral, "secret_access_key"},
		{"role beside keys", "s3://b", &s3.Options{Credentials: "role", AccessKeyID: "env://A", SecretAccessKey: "env://B"}, driver.ErrCredentialConflict, "role"},
		{"role on r2", "r2://a/b", &s3.Options{Credentials: "role"}, driver.ErrCredentialConflict, "R2"},
		{"anonymous with keys", "s3://b", &s3.Options{Anonymous: true, AccessKeyID: "env://A", SecretAccessKey: "env://B"}, driver.ErrCredentialConflict, "anonymous"},
		{"azure both", "az://acct/cont", &azure.Options{AccountKey: "env://K", SASToken: "env://S"}, driver.ErrCredentialConflict, "sas_token"},
		{"azure both names the key", "az://acct/cont", &azure.Options{AccountKey: "env://K", SASToken: "env://S"}, driver.ErrCredentialConflict, "account_key"},
		{"anonymous with a SAS token", "az://acct/cont", &azure.Options{Anonymous: true, SASToken: "env://S"}, driver.ErrCredentialConflict, "anonymous"},
		{"half a key pair", "s3://b", &s3.Options{AccessKeyID: "env://A"}, driver.ErrCredentialUnbound, "secret_access_key"},
		{"insecure endpoint", "s3://b", &s3.Options{Endpoint: "http://192.168.1.9:9000"}, driver.ErrEndpointInsecure, "192.168.1.9"},
		{"password in an endpoint", "s3://b", &s3.Options{Endpoint: "http://u:hunter2@127.0.0.1:9000"}, driver.ErrCredentialLiteral, "[REDACTED]"},
		{"unknown mode", "s3://b", &s3.Options{Credentials: "magic"}, store.ErrConfig, "magic"},
	}
	for _, c := range cases {
		err := store.Check(c.url, &store.Config{Options: c.opts})
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: %v, want %v", c.name, err, c.kind)
			continue
		}
		if !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %q does not name %q", c.name, err, c.says)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error leaks the literal: %v", c.name, err)
		}
	}
	if err := store.Check("s3://b", &store.Config{Options: &s3.Options{AccessKeyID: "env://A", SecretAccessKey: "file:///run/secret"}}); err != nil {
		t.Error(err)
	}
}

// section decodes doc (a YAML mapping) as a config file's store: section.
func section(t *testing.T, doc string, getenv func(string) string) store.Config {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	var cfg store.Config
	d := &yamlconf.Decoder{File: "wharf.yaml", Getenv: getenv}
	if err := d.Decode(n.Content[0], &cfg, "store"); err != nil {
		t.Fatal(err)
	}
	cfg.Getenv = getenv
	return cfg
}

// TestPrecedence: flag > file > environment > default, for every backend the same way.
func TestPrecedence(t *testing.T) {
	env := map[string]string{"AWS_ENDPOINT_URL": "https://env.example", "AWS_REGION": "env-1"}
	getenv := func(k string) string { return env[k] }
	check := func(name string, cfg *store.Config, wantEndpoint string) {
		t.Helper()
		cfg.Allowlist = []string{"nothing.example"} // every endpoint is refused, naming itself
		err := store.Check("s3://bkt/k", cfg)
		if wantEndpoint == "" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			return
		}
		if !errors.Is(err, driver.ErrEndpointNotAllowed) || !strings.Contains(err.Error(), wantEndpoint) {
			t.Errorf("%s: %v, want the endpoint %s refused", name, err, wantEndpoint)
		}
	}
	check("default", &store.Config{}, "")
	check("environment", &store.Config{Getenv: getenv}, "env.example")
	file := section(t, "endpoint: https://file.example\n", getenv)
	check("file over environment", &file, "file.example")
	file.Set = []store.Setting{{Name: "endpoint", Value: "https://flag.example", Source: "--endpoint"}}
	check("flag over file", &file, "flag.example")
	named := store.Stores{"s3": &store.Named{}}
	named["s3"].SetRaw(section2(t, "endpoint: https://stores.example\n"))
	if err := named.Check(); err != nil {
		t.Fatal(err)
	}
	check("stores entry over environment", &store.Config{Getenv: getenv, Stores: named}, "stores.example")
	file2 := section(t, "endpoint: https://file.example\n", getenv)
	file2.Stores = named
	check("section over stores entry", &file2, "file.example")
}

func section2(t *testing.T, doc string) yamlconf.Raw {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	return yamlconf.Raw{Node: n.Content[0], Path: "stores.s3", Dec: &yamlconf.Decoder{File: "wharf.yaml"}}
}

// TestOptionsStrict: an option the backend does not have is refused, naming it, its line, and
// the backend's options; a flag the backend does not take names the flag.
func TestOptionsStrict(t *testing.T) {
	cfg := section(t, "endpoint: https://x.example\n\nsas_token: env://T\n", nil)
	err := store.Check("gs://b/k", &cfg)
	if !errors.Is(err, store.ErrConfig) || !strings.Contains(err.Error(), "wharf.yaml:3") ||
		!strings.Contains(err.Error(), `"sas_token"`) || !strings.Contains(err.Error(), "service_account_file") {
		t.Errorf("an Azure key for gs://: %v", err)
	}
	err = store.Check("./somewhere", &store.Config{Set: []store.Setting{{Name: "region", Value: "x", Source: "--region"}}})
	if !errors.Is(err, store.ErrConfig) || !strings.Contains(err.Error(), "--region") {
		t.Errorf("--region for a file store: %v", err)
	}
}

// TestNamedStores: a URL whose scheme names a store of the config file opens that store's
// backend with its options; the location keeps the name.
func TestNamedStores(t *testing.T) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("lake:\n  backend: s3\n  endpoint: https://lake.example\nodd:\n  endpoint: x\n"), &n); err != nil {
		t.Fatal(err)
	}
	var st store.Stores
	d := &yamlconf.Decoder{File: "wharf.yaml"}
	if err := d.Decode(n.Content[0], &st, "stores"); err != nil {
		t.Fatal(err)
	}
	if err := st.Check(); !errors.Is(err, store.ErrConfig) || !strings.Contains(err.Error(), "stores.odd") {
		t.Errorf("a named store without a backend: %v", err)
	}
	delete(st, "odd")
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}
	cfg := &store.Config{Stores: st, Allowlist: []string{"nothing.example"}}
	loc, err := cfg.ParseURL("lake://bkt/a#b")
	if err != nil || loc.Scheme != "lake" || loc.Bucket != "bkt" || loc.Key != "a#b" {
		t.Fatalf("ParseURL(lake://…) = %+v, %v", loc, err)
	}
	if err := store.Check("lake://bkt/a", cfg); !errors.Is(err, driver.ErrEndpointNotAllowed) || !strings.Contains(err.Error(), "lake.example") {
		t.Errorf("the named store's endpoint is not used: %v", err)
	}
}

// TestNamedStoreKeysStrict: Stores.Check refuses a key the entry's backend does not have,
// naming it, the entry and its line, before any URL uses the entry.
func TestNamedStoreKeysStrict(t *testing.T) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("lake:\n  backend: s3\n  endpont: https://lake.example\n"), &n); err != nil {
		t.Fatal(err)
	}
	var st store.Stores
	if err := (&yamlconf.Decoder{File: "wharf.yaml"}).Decode(n.Content[0], &st, "stores"); err != nil {
		t.Fatal(err)
	}
	err := st.Check()
	if !errors.Is(err, store.ErrConfig) || !strings.Contains(err.Error(), `wharf.yaml:3: stores.lake: unknown key "endpont"`) {
		t.Errorf("a misspelt key of a named store: %v", err)
	}
}

// Only a location whose backend keeps local files has a local path; a plain path is one.
func TestLocalPathOnlyForLocalFiles(t *testing.T) {
	dir := t.TempDir()
	for raw, want := range map[string]string{
		dir + "/x/y":            filepath.Join(dir, "x", "y"),
		"s3://bucket/x/y":       "",
		"gs://bucket/x":         "",
		"az://acct/container/x": "",
		"mem://name/x":          "",
		"-":                     "",
	} {
		loc, err := store.ParseURL(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		got, ok := loc.LocalPath()
		if got != want || ok != (want != "") {
			t.Errorf("%s: LocalPath = %q, %v; want %q", raw, got, ok, want)
		}
	}
}
