package azure

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

// Credential values planted in these tests; no error may hold them.
const (
	plantedKey = "cGxhbnRlZC1henVyZS1hY2NvdW50LWtleS12YWx1ZS0wMTIzNDU2Nzg5YWJjZGVm" // base64
	plantedSAS = "sv=2023-11-03&ss=b&srt=co&sp=rwdlac&se=2030-01-01T00:00:00Z&sig=UGxhbnRlZFNpZ25hdHVyZVZhbHVl%2Bx%2Fy%3D"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// wantNoSecret fails t when text holds the planted key, SAS token or its signature.
func wantNoSecret(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range []string{plantedKey, plantedSAS, "UGxhbnRlZFNpZ25hdHVyZVZhbHVl", "cGxhbnRlZC1henVyZS1hY2NvdW50"} {
		if strings.Contains(text, s) {
			t.Errorf("%s: error leaks a credential (%.12s…): %s", what, s, text)
		}
	}
}

func wantKindNames(t *testing.T, what string, err error, kind *errcode.Code, names ...string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Errorf("%s: %v, want %s", what, err, kind.Code())
		return
	}
	if errcode.NameOf(err) != kind.Code() {
		t.Errorf("%s: code %q, want %q", what, errcode.NameOf(err), kind.Code())
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("%s: %q does not name %q", what, err, n)
		}
	}
	wantNoSecret(t, what, err.Error())
}

var loc = store.Location{Scheme: "az", Account: "acct1", Bucket: "cont"}

// TestConflictingCredentials: account_key with sas_token, and anonymous with either, are
// refused by store.Open before any connection, naming the fields.
func TestConflictingCredentials(t *testing.T) {
	t.Setenv("WHARF_TEST_AZ_KEY", plantedKey)
	t.Setenv("WHARF_TEST_AZ_SAS", plantedSAS)
	cases := []struct {
		name  string
		cfg   testConfig
		names []string
	}{
		{"key and sas", testConfig{Options: Options{AccountKey: "env://WHARF_TEST_AZ_KEY", SASToken: "env://WHARF_TEST_AZ_SAS"}}, []string{"account_key", "sas_token"}},
		{"anonymous and key", testConfig{Options: Options{Anonymous: true, AccountKey: "env://WHARF_TEST_AZ_KEY"}}, []string{"anonymous", "account_key"}},
		{"anonymous and sas", testConfig{Options: Options{Anonymous: true, SASToken: "env://WHARF_TEST_AZ_SAS"}}, []string{"anonymous", "sas_token"}},
	}
	for _, tc := range cases {
		_, err := store.Open(context.Background(), "az://acct1/cont", tc.cfg.storeConfig())
		wantKindNames(t, tc.name, err, driver.ErrCredentialConflict, tc.names...)
	}
	_, err := store.Open(context.Background(), "az://acct1/cont", testConfig{Options: Options{SASToken: plantedSAS}}.storeConfig())
	wantKindNames(t, "literal sas", err, driver.ErrCredentialLiteral, "sas_token")
}

// TestSASForms: a SAS token works with or without its leading '?', and a malformed one is a
// config error naming the field, never its value.
func TestSASForms(t *testing.T) {
	for _, tok := range []string{plantedSAS, "?" + plantedSAS, " ?" + plantedSAS + "\n"} {
		c, err := sasCreds("sas_token", tok)
		if err != nil {
			t.Fatalf("sas %.5q…: %v", tok, err)
		}
		if c.sas.Reveal() != plantedSAS || c.mode != modeSAS {
			t.Errorf("sas %.5q…: kept %q", tok, c.sas.Reveal())
		}
		if c.sasExpiry.Year() != 2030 {
			t.Errorf("sas expiry %v, want 2030", c.sasExpiry)
		}
	}
	bad := []string{
		"not a sas token",
		"sv=2023-11-03&sp=r&se=2030-01-01",                    // no signature
		"sp=r&sig=UGxhbnRlZFNpZ25hdHVyZVZhbHVl",               // no version
		"sv=2023&sig=UGxhbnRlZFNpZ25hdHVyZVZhbHVl%zz",         // a broken escape
		"https://acct1.blob.core.windows.net/c?" + plantedSAS, // a whole URL
		"?",
	}
	for _, tok := range bad {
		_, err := sasCreds("sas_token", tok)
		wantKindNames(t, "malformed sas "+tok[:min(8, len(tok))], err, store.ErrConfig, "sas_token")
		if err != nil && strings.Contains(err.Error(), "UGxhbnRlZFNpZ25hdHVyZVZhbHVl") {
			t.Errorf("malformed sas: error quotes the token: %v", err)
		}
	}
	t.Setenv("WHARF_TEST_AZ_BADSAS", "sv=2023-11-03&sp=r&sig=")
	_, err := store.Open(context.Background(), "az://acct1/cont", testConfig{Options: Options{SASToken: "env://WHARF_TEST_AZ_BADSAS"}}.storeConfig())
	wantKindNames(t, "malformed sas through Open", err, store.ErrConfig, "sas_token")
}

func TestMalformedAccountKey(t *testing.T) {
	t.Setenv("WHARF_TEST_AZ_BADKEY", "not base64 at all!"+plantedKey)
	_, err := store.Open(context.Background(), "az://acct1/cont", testConfig{Options: Options{AccountKey: "env://WHARF_TEST_AZ_BADKEY"}}.storeConfig())
	wantKindNames(t, "malformed key", err, store.ErrConfig, "account_key")
	_, err = store.Open(context.Background(), "az://acct1/cont", testConfig{Options: Options{AccountKey: "env://WHARF_TEST_AZ_UNSET_VAR"}}.storeConfig())
	wantKindNames(t, "unbound key", err, driver.ErrCredentialUnbound, "account_key", "WHARF_TEST_AZ_UNSET_VAR")
}

func TestEnvironmentPrecedence(t *testing.T) {
	cases := []struct {
		name     string
		vars     map[string]string
		cfg      testConfig
		mode     string
		source   string
		endpoint string // the service URL
	}{
		{"config key beats environment", map[string]string{EnvConnectionString: "UseDevelopmentStorage=true"},
			testConfig{Options: Options{AccountKey: "file:///dev/null/never-read"}}, "", "", ""},
		{"connection string first", map[string]string{
			EnvConnectionString: "DefaultEndpointsProtocol=https;AccountName=acct1;AccountKey=" + plantedKey + ";EndpointSuffix=core.chinacloudapi.cn",
			EnvKey:              plantedKey, EnvSASToken: plantedSAS,
		}, testConfig{}, modeSharedKey, EnvConnectionString, "https://acct1.blob.core.chinacloudapi.cn"},
		{"connection string with SAS and endpoint", map[string]string{
			EnvConnectionString: "BlobEndpoint=https://acct1.blob.core.windows.net/;SharedAccessSignature=" + plantedSAS,
		}, testConfig{}, modeSAS, EnvConnectionString, "https://acct1.blob.core.windows.net"},
		{"key", map[string]string{EnvAccount: "acct1", EnvKey: plantedKey, EnvSASToken: plantedSAS},
			testConfig{}, modeSharedKey, EnvKey, "https://acct1.blob.core.windows.net"},
		{"sas", map[string]string{EnvSASToken: "?" + plantedSAS}, testConfig{}, modeSAS, EnvSASToken, "https://acct1.blob.core.windows.net"},
		{"configured endpoint beats the connection string's", map[string]string{
			EnvConnectionString: "UseDevelopmentStorage=true",
		}, testConfig{Options: Options{Endpoint: "http://127.0.0.1:4321"}}, modeSharedKey, EnvConnectionString, "http://127.0.0.1:4321/devstoreaccount1"},
	}
	for _, tc := range cases {
		l := loc
		if strings.Contains(tc.vars[EnvConnectionString], "UseDevelopmentStorage") {
			l.Account = devAccount
		}
		cr, err := credsOf(l, &tc.cfg, env(tc.vars))
		if tc.mode == "" {
			if err == nil || !strings.Contains(err.Error(), "account_key") {
				t.Errorf("%s: %v, want the config's account_key to be read", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if cr.mode != tc.mode || cr.source != tc.source {
			t.Errorf("%s: %s from %s, want %s from %s", tc.name, cr.mode, cr.source, tc.mode, tc.source)
		}
		svc, err := serviceURLOf(l, &tc.cfg, cr)
		if err != nil || svc != tc.endpoint {
			t.Errorf("%s: service URL %q (%v), want %q", tc.name, svc, err, tc.endpoint)
		}
	}
}

// TestDevelopmentConnectionString: Azurite's well-known development connection string, and
// UseDevelopmentStorage=true, name the development account at 127.0.0.1:10000.
func TestDevelopmentConnectionString(t *testing.T) {
	l := store.Location{Scheme: "az", Account: devAccount, Bucket: "cont"}
	for _, cs := range []string{
		"UseDevelopmentStorage=true",
		"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + devKey + ";BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;",
	} {
		cr, err := credsOf(l, &testConfig{}, env(map[string]string{EnvConnectionString: cs}))
		if err != nil {
			t.Fatalf("%.30s…: %v", cs, err)
		}
		svc, err := serviceURLOf(l, &testConfig{}, cr)
		if err != nil || svc != "http://127.0.0.1:10000/devstoreaccount1" || cr.key.Reveal() != devKey {
			t.Errorf("%.30s…: service URL %q (%v), key ok %v", cs, svc, err, cr.key.Reveal() == devKey)
		}
	}
	cr, err := credsOf(l, &testConfig{}, env(map[string]string{EnvConnectionString: "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://localhost"}))
	if err != nil {
		t.Fatal(err)
	}
	if svc, _ := serviceURLOf(l, &testConfig{}, cr); svc != "http://localhost:10000/devstoreaccount1" {
		t.Errorf("proxy URI: service URL %q", svc)
	}
}

func TestEnvironmentErrors(t *testing.T) {
	cases := []struct {
		name  string
		vars  map[string]string
		cfg   testConfig
		kind  *errcode.Code
		names []string
	}{
		{"nothing", nil, testConfig{}, store.ErrConfig, []string{EnvConnectionString, EnvKey, EnvSASToken, "acct1", "anonymous"}},
		{"key of another account", map[string]string{EnvAccount: "other", EnvKey: plantedKey}, testConfig{},
			driver.ErrCredentialConflict, []string{EnvAccount, "other", "acct1"}},
		{"connection string of another account", map[string]string{EnvConnectionString: "AccountName=other;AccountKey=" + plantedKey}, testConfig{},
			driver.ErrCredentialConflict, []string{EnvConnectionString, "other", "acct1"}},
		{"connection string without credentials", map[string]string{EnvConnectionString: "AccountName=acct1;BlobEndpoint=https://x.example"}, testConfig{},
			store.ErrConfig, []string{EnvConnectionString, "AccountKey"}},
		{"not a connection string", map[string]string{EnvConnectionString: plantedKey}, testConfig{},
			store.ErrConfig, []string{EnvConnectionString}},
		{"connection string with a malformed SAS", map[string]string{EnvConnectionString: "SharedAccessSignature=sig=" + plantedKey}, testConfig{},
			store.ErrConfig, []string{EnvConnectionString}},
		{"malformed key in the environment", map[string]string{EnvKey: "%%" + plantedKey}, testConfig{},
			store.ErrConfig, []string{EnvKey}},
		{"plaintext endpoint off loopback", map[string]string{EnvConnectionString: "AccountName=acct1;AccountKey=" + plantedKey + ";BlobEndpoint=http://10.1.2.3:10000/acct1"}, testConfig{},
			driver.ErrEndpointInsecure, []string{"10.1.2.3"}},
		{"endpoint outside the allowlist", map[string]string{EnvConnectionString: "AccountName=acct1;AccountKey=" + plantedKey + ";BlobEndpoint=https://exfil.example.net/acct1"},
			testConfig{Allowlist: []string{"*.blob.core.windows.net"}}, driver.ErrEndpointNotAllowed, []string{"exfil.example.net"}},
	}
	for _, tc := range cases {
		_, err := newContainer(loc, &tc.cfg, env(tc.vars))
		wantKindNames(t, tc.name, err, tc.kind, tc.names...)
	}
}

func TestNames(t *testing.T) {
	for _, u := range []string{"az://acct1/Upper", "az://acct1/ab", "az://acct1/a--b", "az://acct1/-ab", "az://Acct/cont", "az://a_b/cont", "az://ab/cont"} {
		_, err := store.Open(context.Background(), u, testConfig{Options: Options{Anonymous: true}}.storeConfig())
		wantKindNames(t, u, err, store.ErrConfig)
	}
	for _, u := range []string{"az://acct1/cont", "az://acct1/$root", "az://acct1/a-b-c/prefix/"} {
		if _, err := store.Open(context.Background(), u, testConfig{Options: Options{Anonymous: true}}.storeConfig()); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestDescribe(t *testing.T) {
	c, err := newContainer(loc, &testConfig{Options: Options{Endpoint: "http://127.0.0.1:10000"}}, env(map[string]string{EnvSASToken: plantedSAS}))
	if err != nil {
		t.Fatal(err)
	}
	d := c.Describe()
	if d.Scheme != "az" || d.Location != "az://acct1/cont" || d.Endpoint != "http://127.0.0.1:10000/acct1" {
		t.Errorf("Describe = %+v", d)
	}
	c, err = newContainer(loc, &testConfig{Options: Options{Endpoint: "https://acct1.privatelink.blob.core.windows.net/"}}, env(map[string]string{EnvKey: plantedKey}))
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Describe(); d.Endpoint != "https://acct1.privatelink.blob.core.windows.net" {
		t.Errorf("the account's own endpoint: %+v", d)
	}
}
