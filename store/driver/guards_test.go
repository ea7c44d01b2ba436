package driver

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/errcode"
)

func TestValidateKey(t *testing.T) {
	bad := []string{"", "/a", "a//b", "../x", "a/../b", "a/..", "./a", "a\x00b", "a\nb", "a\x7fb", "a//", "/", string([]byte{0xff})}
	good := []string{"a/", "a/b/", "a/b/c.parquet", "date=2024-01-01/x y.json", "ünïcode/ключ", "a..b", ".hidden", "tab\tkey"}
	if runtime.GOOS != "windows" {
		for _, op := range []string{"get", "head", "list"} {
			if err := ValidateKey(op, `a\b`); err != nil {
				t.Errorf("ValidateKey(%s, a\\b) = %v: a backslash key is readable", op, err)
			}
		}
	}
	for _, op := range []string{"put", "copy", "delete"} {
		if err := ValidateKey(op, `a\b`); !errors.Is(err, ErrKeyInvalid) {
			t.Errorf("ValidateKey(%s, a\\b) = %v, want ErrKeyInvalid", op, err)
		}
	}
	for _, k := range bad {
		err := ValidateKey("put", k)
		if !errors.Is(err, ErrKeyInvalid) {
			t.Errorf("ValidateKey(%q) = %v, want ErrKeyInvalid", k, err)
		}
		if errcode.NameOf(err) != "WHARF_KEY_INVALID" {
			t.Errorf("code %q", errcode.NameOf(err))
		}
	}
	for _, k := range good {
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

func TestCheckEndpoint(t *testing.T) {
	ok := []string{"", "http://127.0.0.1:9000", "http://localhost:9000", "http://[::1]:9000", "http://127.8.9.10", "https://s3.example.com"}
	for _, e := range ok {
		if err := (&Common{}).CheckEndpoint("endpoint", e); err != nil {
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
		err := (&Common{}).CheckEndpoint("endpoint", e)
		if !errors.Is(err, kind) {
			t.Errorf("CheckEndpoint(%q) = %v, want %v", e, err, kind)
		}
	}
	if err := (&Common{}).CheckEndpoint("endpoint", "http://10.0.0.5:9000"); !strings.Contains(err.Error(), "10.0.0.5") {
		t.Errorf("insecure error does not name the host: %v", err)
	}
	allow := ParseAllowlist(" *.example.com, 127.0.0.1 ,")
	if err := (&Common{Allowlist: allow}).CheckEndpoint("endpoint", "https://s3.example.com"); err != nil {
		t.Error(err)
	}
	if err := (&Common{Allowlist: allow}).CheckEndpoint("endpoint", "http://127.0.0.1:9000"); err != nil {
		t.Error(err)
	}
	err := (&Common{Allowlist: allow}).CheckEndpoint("endpoint", "https://exfil.attacker.net")
	if !errors.Is(err, ErrEndpointNotAllowed) || !strings.Contains(err.Error(), "exfil.attacker.net") {
		t.Errorf("allowlist: %v", err)
	}
}

func TestResolveCredential(t *testing.T) {
	t.Setenv("WHARF_TEST_SECRET", "s3cr3t-value")
	v, err := (&Common{Getenv: os.Getenv}).Resolve("secret_access_key", "env://WHARF_TEST_SECRET")
	if err != nil || v.Reveal() != "s3cr3t-value" {
		t.Fatalf("resolve: %v", err)
	}
	_, err = (&Common{Getenv: os.Getenv}).Resolve("secret_access_key", "env://WHARF_TEST_UNSET_VAR")
	if !errors.Is(err, ErrCredentialUnbound) || !strings.Contains(err.Error(), "WHARF_TEST_UNSET_VAR") || !strings.Contains(err.Error(), "secret_access_key") {
		t.Errorf("unbound env: %v", err)
	}
	_, err = (&Common{Getenv: os.Getenv}).Resolve("account_key", "file:///nonexistent/wharf/key")
	if !errors.Is(err, ErrCredentialUnbound) || !strings.Contains(err.Error(), "/nonexistent/wharf/key") {
		t.Errorf("unbound file: %v", err)
	}
	_, err = (&Common{Getenv: os.Getenv}).Resolve("account_key", "AKIA-literal-value")
	if !errors.Is(err, ErrCredentialLiteral) || strings.Contains(err.Error(), "AKIA-literal-value") {
		t.Errorf("literal: %v", err)
	}
	p := filepath.Join(t.TempDir(), "k")
	os.WriteFile(p, []byte("from-file\n"), 0o600)
	v, err = (&Common{Getenv: os.Getenv}).Resolve("session_token", "file://"+p)
	if err != nil || v.Reveal() != "from-file" {
		t.Errorf("file: %q %v", v.Reveal(), err)
	}
}

func TestErrorUnwrapsToKindAndCause(t *testing.T) {
	cause := errors.New("boom")
	err := error(&Error{Op: "get", Key: "a/b", Kind: ErrNotExist, Err: cause, Status: 404, Reason: "NoSuchKey"})
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
	if errcode.NameOf(err) != "WHARF_NOT_FOUND" || errcode.NameOf(errors.New("x")) != "" {
		t.Error("code")
	}
}

// TestCheckEndpointRefusesUserinfo: a password in an endpoint is refused before any
// connection, whatever the form, and never printed.
func TestCheckEndpointRefusesUserinfo(t *testing.T) {
	for _, e := range []string{
		"http://u:s3cret-pw@127.0.0.1:9000",
		"https://u:s3cret-pw@s3.example.com/",
		"https://s3cret-pw@s3.example.com",
		"u:s3cret-pw@127.0.0.1:9000",
	} {
		err := (&Common{}).CheckEndpoint("--endpoint", e)
		if !errors.Is(err, ErrCredentialLiteral) {
			t.Errorf("CheckEndpoint(%q) = %v, want ErrCredentialLiteral", e, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cret-pw") || !strings.Contains(err.Error(), "--endpoint") {
			t.Errorf("CheckEndpoint(%q): %q leaks the password or does not name the source", e, err)
		}
	}
}

// TestRequireAllow: an export destination's custom endpoint outside this machine needs an
// allow-list entry even when the list is empty; loopback needs none.
func TestRequireAllow(t *testing.T) {
	c := &Common{RequireAllow: true}
	if err := c.CheckEndpoint("endpoint", "https://10.1.2.3:9000"); !errors.Is(err, ErrEndpointNotAllowed) ||
		!strings.Contains(err.Error(), "WHARF_ENDPOINT_ALLOWLIST=10.1.2.3") {
		t.Errorf("custom endpoint without an allow: %v", err)
	}
	if err := c.CheckEndpoint("endpoint", "http://127.0.0.1:9000"); err != nil {
		t.Errorf("loopback: %v", err)
	}
	c.Allowlist = []string{"10.1.2.3"}
	if err := c.CheckEndpoint("endpoint", "https://10.1.2.3:9000"); err != nil {
		t.Errorf("allowed: %v", err)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://u:p@h:1/x":  "http://[REDACTED]@h:1/x",
		"s3://u:p@bucket":   "s3://[REDACTED]@bucket",
		"https://h/a@b":     "https://h/a@b",
		"s3://bucket/k@x/y": "s3://bucket/k@x/y",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckEndpointWaivers: allow_http lets a plaintext endpoint outside this machine through,
// with a warning naming it (never its password); allow_anonymous waives RequireAllow only for a
// store that sends no credentials, and never an explicit allow-list.
func TestCheckEndpointWaivers(t *testing.T) {
	var logged strings.Builder
	c := &Common{Logger: slog.New(slog.NewTextHandler(&logged, nil))}
	if err := c.CheckEndpointWaived("endpoint", "http://minio:9000", Waivers{AllowHTTP: true}); err != nil {
		t.Fatalf("allow_http: %v", err)
	}
	if !strings.Contains(logged.String(), "allow_http") || !strings.Contains(logged.String(), "http://minio:9000") {
		t.Errorf("allow_http logged %q, want a warning naming the endpoint", logged.String())
	}
	if err := c.CheckEndpointWaived("endpoint", "http://minio:9000", Waivers{AllowAnonymous: true, Anonymous: true}); !errors.Is(err, ErrEndpointInsecure) {
		t.Errorf("allow_anonymous alone on http: %v, want ErrEndpointInsecure", err)
	}

	guarded := &Common{RequireAllow: true}
	if err := guarded.CheckEndpointWaived("endpoint", "https://public.example.org", Waivers{}); !errors.Is(err, ErrEndpointNotAllowed) {
		t.Fatalf("guarded, no waiver: %v, want ErrEndpointNotAllowed", err)
	}
	if err := guarded.CheckEndpointWaived("endpoint", "https://public.example.org", Waivers{AllowAnonymous: true, Anonymous: true}); err != nil {
		t.Errorf("guarded, allow_anonymous with anonymous: %v", err)
	}
	if err := guarded.CheckEndpointWaived("endpoint", "https://public.example.org", Waivers{AllowAnonymous: true}); !errors.Is(err, ErrCredentialConflict) {
		t.Errorf("allow_anonymous without anonymous: %v, want ErrCredentialConflict", err)
	}
	listed := &Common{RequireAllow: true, Allowlist: ParseAllowlist("*.example.com")}
	if err := listed.CheckEndpointWaived("endpoint", "https://public.example.org", Waivers{AllowAnonymous: true, Anonymous: true}); !errors.Is(err, ErrEndpointNotAllowed) {
		t.Errorf("allow_anonymous against an explicit allow-list: %v, want ErrEndpointNotAllowed", err)
	}
}
