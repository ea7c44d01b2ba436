package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateKey(t *testing.T) {
	bad := []string{"", "/a", "a//b", "../x", "a/../b", "a/..", "./a", "a\\b", "a\x00b", "a\nb", "a/", string([]byte{0xff})}
	for _, k := range bad {
		err := ValidateKey("put", k)
		if !errors.Is(err, ErrKeyInvalid) {
			t.Errorf("ValidateKey(%q) = %v, want ErrKeyInvalid", k, err)
		}
		if Code(err) != "WHARF_KEY_INVALID" {
			t.Errorf("code %q", Code(err))
		}
	}
	for _, k := range []string{"a", "a/b/c.parquet", "date=2024-01-01/x y.json", "ünïcode/ключ", "a..b", ".hidden"} {
		if err := ValidateKey("put", k); err != nil {
			t.Errorf("ValidateKey(%q) = %v, want ok", k, err)
		}
	}
}

func TestValidateMetadata(t *testing.T) {
	if err := ValidateMetadata("put", "k", map[string]string{"wharf-sha256": "ab", "x1": ""}); err != nil {
		t.Fatal(err)
	}
	for _, md := range []map[string]string{{"Upper": "x"}, {"with_underscore": "x"}, {"1a": "x"}, {"ok": "caf\u00e9"}} {
		if err := ValidateMetadata("put", "k", md); !errors.Is(err, ErrKeyInvalid) {
			t.Errorf("ValidateMetadata(%v) = %v, want ErrKeyInvalid", md, err)
		}
	}
}

func TestParseURL(t *testing.T) {
	wd, _ := os.Getwd()
	cases := []struct {
		in                         string
		scheme, bucket, acct, path string
	}{
		{"s3://bkt/logs/2024/", "s3", "bkt", "", "logs/2024/"},
		{"s3://bkt", "s3", "bkt", "", ""},
		{"gs://b/p", "gs", "b", "", "p"},
		{"r2://acct123/bkt/p/q", "r2", "bkt", "acct123", "p/q"},
		{"az://acct/cont/x", "az", "cont", "acct", "x"},
		{"mem://demo/x", "mem", "demo", "", "x"},
		{"file:///tmp/data", "file", "/tmp/data", "", ""},
		{"/tmp/data", "file", "/tmp/data", "", ""},
		{"./rel/dir", "file", filepath.Join(wd, "rel/dir"), "", ""},
		{"-", "stdout", "", "", ""},
		{"stdout://", "stdout", "", "", ""},
	}
	for _, c := range cases {
		loc, err := ParseURL(c.in)
		if err != nil {
			t.Errorf("ParseURL(%q): %v", c.in, err)
			continue
		}
		if loc.Scheme != c.scheme || loc.Bucket != c.bucket || loc.Account != c.acct || loc.Path != c.path {
			t.Errorf("ParseURL(%q) = %+v", c.in, loc)
		}
	}
	for in, kind := range map[string]error{
		"ftp://host/x":        ErrEndpointUnsupported,
		"hdfs://nn/x":         ErrEndpointUnsupported,
		"s3://user:pw@bkt/x":  ErrCredentialLiteral,
		"s3:///nobucket":      ErrConfig,
		"r2://onlyaccount":    ErrConfig,
		"file://relative/dir": ErrConfig,
	} {
		_, err := ParseURL(in)
		if !errors.Is(err, kind) {
			t.Errorf("ParseURL(%q) = %v, want %v", in, err, kind)
		}
		if strings.Contains(in, "pw") && strings.Contains(err.Error(), "pw@") {
			t.Errorf("error repeats the credential: %v", err)
		}
	}
}

func TestCheckEndpoint(t *testing.T) {
	ok := []string{"", "http://127.0.0.1:9000", "http://localhost:9000", "http://[::1]:9000", "http://127.8.9.10", "https://s3.example.com"}
	for _, e := range ok {
		if err := CheckEndpoint(e, nil); err != nil {
			t.Errorf("CheckEndpoint(%q) = %v", e, err)
		}
	}
	bad := map[string]error{
		"http://10.0.0.5:9000":      ErrEndpointInsecure,
		"http://minio.internal":     ErrEndpointInsecure,
		"http://localhost.evil.com": ErrEndpointInsecure,
		"ftp://127.0.0.1":           ErrEndpointUnsupported,
		"127.0.0.1:9000":            ErrEndpointUnsupported,
	}
	for e, kind := range bad {
		err := CheckEndpoint(e, nil)
		if !errors.Is(err, kind) {
			t.Errorf("CheckEndpoint(%q) = %v, want %v", e, err, kind)
		}
	}
	if err := CheckEndpoint("http://10.0.0.5:9000", nil); !strings.Contains(err.Error(), "10.0.0.5") {
		t.Errorf("insecure error does not name the host: %v", err)
	}
	allow := ParseAllowlist(" *.example.com, 127.0.0.1 ,")
	if err := CheckEndpoint("https://s3.example.com", allow); err != nil {
		t.Error(err)
	}
	if err := CheckEndpoint("http://127.0.0.1:9000", allow); err != nil {
		t.Error(err)
	}
	err := CheckEndpoint("https://exfil.attacker.net", allow)
	if !errors.Is(err, ErrEndpointNotAllowed) || !strings.Contains(err.Error(), "exfil.attacker.net") {
		t.Errorf("allowlist: %v", err)
	}
}

func TestConfigCheck(t *testing.T) {
	s3 := Location{Scheme: "s3", Bucket: "b"}
	cases := []struct {
		name string
		cfg  Config
		loc  Location
		kind error
		says string
	}{
		{"literal secret", Config{AccessKeyID: "env://A", SecretAccessKey: "hunter2-literal"}, s3, ErrCredentialLiteral, "secret_access_key"},
		{"role beside keys", Config{Credentials: "role", AccessKeyID: "env://A", SecretAccessKey: "env://B"}, s3, ErrCredentialConflict, "role"},
		{"role on r2", Config{Credentials: "role"}, Location{Scheme: "r2", Account: "a", Bucket: "b"}, ErrCredentialConflict, "R2"},
		{"anonymous with keys", Config{Anonymous: true, AccessKeyID: "env://A", SecretAccessKey: "env://B"}, s3, ErrCredentialConflict, "anonymous"},
		{"azure both", Config{AccountKey: "env://K", SASToken: "env://S"}, Location{Scheme: "az"}, ErrCredentialConflict, "sas_token"},
		{"azure both names the key", Config{AccountKey: "env://K", SASToken: "env://S"}, Location{Scheme: "az"}, ErrCredentialConflict, "account_key"},
		{"anonymous with a SAS token", Config{Anonymous: true, SASToken: "env://S"}, Location{Scheme: "az"}, ErrCredentialConflict, "sas_token"},
		{"anonymous with an account key", Config{Anonymous: true, AccountKey: "env://K"}, Location{Scheme: "az"}, ErrCredentialConflict, "account_key"},
		{"half a key pair", Config{AccessKeyID: "env://A"}, s3, ErrCredentialUnbound, "secret_access_key"},
		{"insecure endpoint", Config{Endpoint: "http://192.168.1.9:9000"}, s3, ErrEndpointInsecure, "192.168.1.9"},
		{"unknown mode", Config{Credentials: "magic"}, s3, ErrConfig, "magic"},
	}
	for _, c := range cases {
		err := c.cfg.Check(c.loc)
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
	ok := Config{AccessKeyID: "env://A", SecretAccessKey: "file:///run/secret"}
	if err := ok.Check(s3); err != nil {
		t.Error(err)
	}
}

func TestResolveCredential(t *testing.T) {
	t.Setenv("WHARF_TEST_SECRET", "s3cr3t-value")
	v, err := Resolve("secret_access_key", "env://WHARF_TEST_SECRET")
	if err != nil || v.Reveal() != "s3cr3t-value" {
		t.Fatalf("resolve: %v", err)
	}
	_, err = Resolve("secret_access_key", "env://WHARF_TEST_UNSET_VAR")
	if !errors.Is(err, ErrCredentialUnbound) || !strings.Contains(err.Error(), "WHARF_TEST_UNSET_VAR") || !strings.Contains(err.Error(), "secret_access_key") {
		t.Errorf("unbound env: %v", err)
	}
	_, err = Resolve("account_key", "file:///nonexistent/wharf/key")
	if !errors.Is(err, ErrCredentialUnbound) || !strings.Contains(err.Error(), "/nonexistent/wharf/key") {
		t.Errorf("unbound file: %v", err)
	}
	_, err = Resolve("account_key", "AKIA-literal-value")
	if !errors.Is(err, ErrCredentialLiteral) || strings.Contains(err.Error(), "AKIA-literal-value") {
		t.Errorf("literal: %v", err)
	}
	p := filepath.Join(t.TempDir(), "k")
	os.WriteFile(p, []byte("from-file\n"), 0o600)
	v, err = Resolve("session_token", "file://"+p)
	if err != nil || v.Reveal() != "from-file" {
		t.Errorf("file: %q %v", v.Reveal(), err)
	}
}

func TestErrorUnwrapsToKindAndCause(t *testing.T) {
	cause := errors.New("boom")
	err := error(&Error{Op: "get", Key: "a/b", Kind: ErrNotExist, Err: cause, Status: 404, Code: "NoSuchKey"})
	if !errors.Is(err, ErrNotExist) || !errors.Is(err, cause) || errors.Is(err, ErrBucketMissing) {
		t.Fatal("unwrap")
	}
	var e *Error
	if !errors.As(err, &e) || e.Op != "get" || e.Key != "a/b" {
		t.Fatal("as")
	}
	for _, want := range []string{"get", `"a/b"`, "404", "NoSuchKey", "boom"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err.Error(), want)
		}
	}
	if Code(err) != "WHARF_NOT_FOUND" || Code(errors.New("x")) != "" {
		t.Error("code")
	}
}
