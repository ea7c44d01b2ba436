package gcs

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

// testKeyPEM is a private key made for this test run.
var testKeyPEM = sync.OnceValue(func() string {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
})

// keyBody is the base64 body of the test key: what must never appear in any error.
func keyBody() string {
	lines := strings.Split(strings.TrimSpace(testKeyPEM()), "\n")
	return strings.Join(lines[1:len(lines)-1], "")
}

// keyJSON returns a service-account key file's JSON with the fields given (nil leaves the
// default; "" removes it).
func keyJSON(t *testing.T, tokenURI string, override map[string]any) []byte {
	t.Helper()
	f := map[string]any{
		"type": "service_account", "project_id": "wharf-test-project", "private_key_id": "0123abcd",
		"private_key": testKeyPEM(), "client_email": "wharf@wharf-test-project.iam.gserviceaccount.com",
		"client_id": "1234567890", "token_uri": tokenURI,
	}
	for k, v := range override {
		if v == "" {
			delete(f, k)
		} else {
			f[k] = v
		}
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantNoSecret fails t when err, in any form, holds the private key or a line of it.
func wantNoSecret(t *testing.T, what string, err error) {
	t.Helper()
	msg := fmt.Sprintf("%v %+v %#v", err, err, err)
	if strings.Contains(msg, keyBody()[:40]) || strings.Contains(msg, "BEGIN PRIVATE KEY") {
		t.Errorf("%s: the private key is in the error: %s", what, msg)
	}
	for _, line := range strings.Split(testKeyPEM(), "\n")[1:5] {
		if strings.Contains(msg, line) {
			t.Errorf("%s: a line of the private key is in the error", what)
		}
	}
}

func openGS(cfg testConfig) (*store.Store, error) {
	return store.Open(context.Background(), "gs://"+uniqueBucket(), cfg.storeConfig())
}

func TestServiceAccountFileUnreadable(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-key.json")
	dir := t.TempDir()
	for _, tc := range []struct{ ref, names string }{
		{"file://" + missing, missing},
		{"file://" + dir, dir},
		{"env://WHARF_GCS_TEST_UNSET_KEY", "WHARF_GCS_TEST_UNSET_KEY"},
	} {
		_, err := openGS(testConfig{Options: Options{ServiceAccountFile: tc.ref}})
		if !errors.Is(err, driver.ErrCredentialUnbound) {
			t.Errorf("%s: %v, want ErrCredentialUnbound", tc.ref, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.names) || !strings.Contains(err.Error(), serviceAccountField) {
			t.Errorf("%s: %v does not name the field and %s", tc.ref, err, tc.names)
		}
	}
	_, err := openGS(testConfig{Options: Options{ServiceAccountFile: "/etc/key.json"}})
	if !errors.Is(err, driver.ErrCredentialLiteral) {
		t.Errorf("a path given as a literal: %v, want ErrCredentialLiteral", err)
	}
}

// TestServiceAccountFileMalformed: a key file that is not a usable service-account key is
// refused when the store is opened, naming the reference and the JSON field at fault, never a
// byte of the content.
func TestServiceAccountFileMalformed(t *testing.T) {
	garbledKey := strings.Replace(testKeyPEM(), keyBody()[:60], strings.Repeat("A", 60), 1)
	for _, tc := range []struct {
		name  string
		data  []byte
		field string // what the error must name
	}{
		{"not JSON", []byte("private_key = " + testKeyPEM()), "syntax error"},
		{"truncated JSON", keyJSON(t, "", nil)[:200], "syntax error"},
		{"a JSON array", []byte(`["` + keyBody() + `"]`), "not a JSON object"},
		{"no type", keyJSON(t, "", map[string]any{"type": ""}), "field type"},
		{"another type", keyJSON(t, "", map[string]any{"type": "authorized_user"}), "field type"},
		{"no client_email", keyJSON(t, "", map[string]any{"client_email": ""}), "field client_email"},
		{"no private_key", keyJSON(t, "", map[string]any{"private_key": ""}), "field private_key"},
		{"private_key not a string", keyJSON(t, "", map[string]any{"private_key": []string{keyBody()}}), "field private_key"},
		{"private_key without PEM", keyJSON(t, "", map[string]any{"private_key": keyBody()}), "field private_key"},
		{"private_key garbled", keyJSON(t, "", map[string]any{"private_key": garbledKey}), "field private_key"},
	} {
		path := writeFile(t, tc.data)
		_, err := openGS(testConfig{Options: Options{ServiceAccountFile: "file://" + path}})
		if !errors.Is(err, store.ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", tc.name, err)
			continue
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v does not name the path and %q", tc.name, err, tc.field)
		}
		wantNoSecret(t, tc.name, err)
	}
	t.Setenv("WHARF_GCS_TEST_KEY", `{"type": "service_account", "private_key": 7}`)
	_, err := openGS(testConfig{Options: Options{ServiceAccountFile: "env://WHARF_GCS_TEST_KEY"}})
	if !errors.Is(err, store.ErrConfig) || !strings.Contains(err.Error(), "env://WHARF_GCS_TEST_KEY") ||
		!strings.Contains(err.Error(), "field private_key") {
		t.Errorf("key in a variable with a numeric private_key: %v", err)
	}
}

// tokenServer is a loopback OAuth token endpoint: it answers status (200: a bearer token).
type tokenServer struct {
	*httptest.Server
	calls  atomic.Int64
	status int
}

const testToken = "ya29.wharf-test-token"

func newTokenServer(t *testing.T, status int) *tokenServer {
	ts := &tokenServer{status: status}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.calls.Add(1)
		if err := r.ParseForm(); err != nil || r.Form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" ||
			strings.Count(r.Form.Get("assertion"), ".") != 2 {
			http.Error(w, "bad token request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if ts.status != 200 {
			w.WriteHeader(ts.status)
			fmt.Fprint(w, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`)
			return
		}
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3600}`, testToken)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// bearerSeen reports whether the proxy saw the test token on every request it recorded.
func bearerSeen(t *testing.T, p *faultproxy.Proxy) {
	t.Helper()
	reqs := p.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the server")
	}
	for _, r := range reqs {
		if got := r.Header.Get("Authorization"); got != "Bearer "+testToken {
			t.Fatalf("%s %s carried Authorization %q", r.Method, r.Path, got)
		}
	}
}

// TestServiceAccountFileAuthenticates: a valid key is exchanged for a token at its token_uri
// (a loopback fake here), and every request carries that token, STORAGE_EMULATOR_HOST set or
// not; a refused exchange is ErrForbidden, not retried, and the key stays out of the error.
func TestServiceAccountFileAuthenticates(t *testing.T) {
	srv := testenv.FakeGCS(t)
	// Set beside a configured endpoint, the variable changes nothing: the SDK alone would
	// drop the credentials for it.
	t.Setenv(EmulatorHostEnv, "127.0.0.1:1")
	p := faultproxy.New(t, srv.Endpoint, faultproxy.Options{KeepAlive: true})
	ok := newTokenServer(t, 200)
	path := writeFile(t, keyJSON(t, ok.URL, nil))
	s, err := openGS(testConfig{Options: Options{Endpoint: p.URL(), ServiceAccountFile: "file://" + path}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.MakeBucket(ctx); err != nil {
		t.Fatal(err)
	}
	b := s.Bucket().(*Bucket)
	t.Cleanup(func() { removeBucket(t, b) })
	if _, err := s.Put(ctx, "k", strings.NewReader("x"), &store.PutOptions{Size: 1, IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	readAll(t, s, "k", nil)
	bearerSeen(t, p)
	if n := ok.calls.Load(); n != 1 {
		t.Errorf("%d token requests, want 1 (the token is cached)", n)
	}
	if got := p.Requests()[0].RawQuery; !strings.Contains(got, "project=wharf-test-project") {
		t.Errorf("the bucket was made with %q: want the key's project_id", got)
	}

	refused := newTokenServer(t, 400)
	path = writeFile(t, keyJSON(t, refused.URL, nil))
	s2, err := openGS(testConfig{Options: Options{Endpoint: p.URL(), ServiceAccountFile: "file://" + path}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	_, err = s2.Head(ctx, "k")
	if !errors.Is(err, store.ErrForbidden) || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("head with a refused key: %v, want ErrForbidden saying why", err)
	}
	wantNoSecret(t, "refused token", err)
	if n := refused.calls.Load(); n != 1 {
		t.Errorf("%d token requests after a refusal, want 1 (no retry)", n)
	}
}

// TestApplicationDefaultCredentials: with no credentials configured, GOOGLE_APPLICATION_CREDENTIALS
// is used, found at the first request (Open connects to nothing and fails on nothing).
func TestApplicationDefaultCredentials(t *testing.T) {
	srv := testenv.FakeGCS(t)
	p := faultproxy.New(t, srv.Endpoint, faultproxy.Options{KeepAlive: true})
	ts := newTokenServer(t, 200)
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", writeFile(t, keyJSON(t, ts.URL, nil)))
	t.Setenv(EmulatorHostEnv, "")
	s, err := openGS(testConfig{Options: Options{Endpoint: p.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ts.calls.Load() != 0 || len(p.Requests()) != 0 {
		t.Fatal("Open made a request")
	}
	if _, err := s.List(context.Background(), nil); !errors.Is(err, store.ErrBucketMissing) {
		t.Fatalf("list of a bucket never made: %v", err)
	}
	bearerSeen(t, p)

	missing := filepath.Join(t.TempDir(), "adc.json")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", missing)
	s, err = openGS(testConfig{Options: Options{Endpoint: p.URL()}})
	if err != nil {
		t.Fatalf("open with unusable default credentials: %v; they are looked up on the first request", err)
	}
	defer s.Close()
	_, err = s.Head(context.Background(), "k")
	if !errors.Is(err, store.ErrForbidden) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("head without usable default credentials: %v, want ErrForbidden naming %s", err, missing)
	}
}

// TestEmulatorHostEnv: STORAGE_EMULATOR_HOST alone (no endpoint, no credentials in the config)
// reaches the emulator without credentials, as Google's SDKs do; it passes the endpoint rules;
// a configured endpoint wins over it.
func TestEmulatorHostEnv(t *testing.T) {
	srv := testenv.FakeGCS(t)
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "none.json")) // would fail if used
	t.Setenv(EmulatorHostEnv, strings.TrimPrefix(srv.Endpoint, "http://"))
	name := uniqueBucket()
	s, err := store.Open(context.Background(), "gs://"+name+"/pre", &store.Config{Getenv: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if d := s.Describe(); d.Endpoint != srv.Endpoint || d.Location != "gs://"+name+"/pre/" {
		t.Errorf("describe: %+v", d)
	}
	ctx := context.Background()
	if err := s.MakeBucket(ctx); err != nil {
		t.Fatal(err)
	}
	b := s.Bucket().(*Bucket)
	t.Cleanup(func() { removeBucket(t, b) })
	if _, err := s.Put(ctx, "k", strings.NewReader("via env"), &store.PutOptions{Size: 7, IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	if data, _ := readAll(t, s, "k", nil); string(data) != "via env" {
		t.Fatalf("read %q", data)
	}
	if page, err := s.List(ctx, &store.ListOptions{}); err != nil || len(page.Objects) != 1 || page.Objects[0].Key != "k" {
		t.Fatalf("list %+v %v", page, err)
	}

	t.Setenv(EmulatorHostEnv, "http://"+strings.TrimPrefix(srv.Endpoint, "http://"))
	if _, err := openGS(testConfig{}); err != nil {
		t.Errorf("a URL in %s: %v", EmulatorHostEnv, err)
	}
	t.Setenv(EmulatorHostEnv, "gcs.example.com:4443")
	if _, err := openGS(testConfig{}); !errors.Is(err, driver.ErrEndpointInsecure) || !strings.Contains(err.Error(), EmulatorHostEnv) {
		t.Errorf("plaintext emulator off loopback: %v, want ErrEndpointInsecure naming %s", err, EmulatorHostEnv)
	}
	t.Setenv(EmulatorHostEnv, "https://gcs.example.com")
	if _, err := openGS(testConfig{Allowlist: []string{"*.internal"}}); !errors.Is(err, driver.ErrEndpointNotAllowed) {
		t.Errorf("emulator outside the allowlist: %v, want ErrEndpointNotAllowed", err)
	}
	// A configured endpoint wins; the variable is not even parsed.
	t.Setenv(EmulatorHostEnv, "::not a host::")
	s2, err := openGS(testConfig{Options: Options{Endpoint: srv.Endpoint, Anonymous: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.Head(ctx, "k"); !errors.Is(err, store.ErrBucketMissing) {
		t.Errorf("head on the configured endpoint: %v", err)
	}
}

// credentials: role is S3's: for gs:// it is an option the backend does not have.
func TestCredentialsRoleRefused(t *testing.T) {
	_, err := store.Open(context.Background(), "gs://"+uniqueBucket(),
		&store.Config{Set: []store.Setting{{Name: "credentials", Value: "role", Source: "credentials"}}})
	if !errors.Is(err, store.ErrConfig) || !strings.Contains(err.Error(), "credentials") {
		t.Fatalf("credentials: role on gs://: %v", err)
	}
}
