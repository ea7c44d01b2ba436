package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wharfdata/wharf/store"
)

// Fakes of the three workload-role sources, each an httptest server on 127.0.0.1 that the
// SDK's own provider is pointed at through its environment variable.

const (
	fakeECSAuth     = "ecs-authorization-token-value"
	fakeWebIdentity = "eyJ-web-identity-token-value"
	fakeRoleARN     = "arn:aws:iam::123456789012:role/wharf-test"
	fakeIMDSToken   = "imds-session-token-value"
	fakeIMDSRole    = "wharf-instance-role"
)

// roleEnvVars is every variable that could configure a role source, or point one (or the SDK's
// profile) elsewhere.
var roleEnvVars = []string{
	"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
	"AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
	"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME",
	"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
	"AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
	"AWS_EC2_METADATA_V1_DISABLED", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_CA_BUNDLE",
}

// noRoleEnv unsets every role source and keeps the SDK off any profile, and off IMDS's default
// 169.254.169.254: a test turns a source on by pointing it at its loopback fake.
func noRoleEnv(t *testing.T) {
	t.Helper()
	for _, k := range roleEnvVars {
		t.Setenv(k, "") // restores the old value when the test ends
		os.Unsetenv(k)
	}
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "absent-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "absent-credentials"))
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// fakeClock is the role provider's clock in tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Now().UTC().Truncate(time.Second)} }

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// roleFake is the state behind one source's fake: it hands out keys numbered 1, 2, … that
// expire ttl after the fake clock's now, counts credential fetches, and can fail or block.
type roleFake struct {
	name string // "ecs", "sts", "imds": part of every key it hands out
	clk  *fakeClock
	ttl  time.Duration

	mu      sync.Mutex
	gen     int           // keys handed out
	fetches int           // credential requests seen, answered or not
	fail    bool          // answer fetches with a 500
	block   chan struct{} // when set, a fetch waits for it to close
	noToken int           // IMDS: metadata GETs without the session token
	tokens  int           // IMDS: session tokens handed out
	sent    []string      // STS: web identity tokens received
}

type fakeKeys struct {
	id, secret, token string
	expires           time.Time
}

func keysOf(name string, n int) fakeKeys {
	return fakeKeys{
		id:     fmt.Sprintf("AKID%s%d", strings.ToUpper(name), n),
		secret: fmt.Sprintf("secret-%s-%d-do-not-leak", name, n),
		token:  fmt.Sprintf("session-%s-%d-do-not-leak", name, n),
	}
}

// fetch records a credential request and returns the next keys, or false to fail.
func (f *roleFake) fetch() (fakeKeys, bool) {
	f.mu.Lock()
	f.fetches++
	block := f.block
	f.mu.Unlock()
	if block != nil {
		<-block
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return fakeKeys{}, false
	}
	f.gen++
	k := keysOf(f.name, f.gen)
	k.expires = f.clk.now().Add(f.ttl)
	return k, true
}

func (f *roleFake) set(fn func(*roleFake)) {
	f.mu.Lock()
	fn(f)
	f.mu.Unlock()
}

// get reads the fake's state under its lock.
func (f *roleFake) get(fn func(*roleFake) int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fn(f)
}

func (f *roleFake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fetches
}

// secrets returns every secret value the fake has handed out or was sent.
func (f *roleFake) secrets() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []string{fakeECSAuth, fakeWebIdentity, fakeIMDSToken}
	for n := 1; n <= f.gen+1; n++ {
		k := keysOf(f.name, n)
		out = append(out, k.secret, k.token)
	}
	return out
}

// startRoleServer serves h on loopback; a blocked fetch is released before the server closes.
func startRoleServer(t *testing.T, f *roleFake, h http.Handler) string {
	url := newServer(t, h)
	t.Cleanup(func() {
		f.mu.Lock()
		if f.block != nil {
			select {
			case <-f.block:
			default:
				close(f.block)
			}
		}
		f.mu.Unlock()
	})
	return url
}

// startECS serves the container credential endpoint and points
// AWS_CONTAINER_CREDENTIALS_FULL_URI at it, with an authorization token.
func startECS(t *testing.T, f *roleFake) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /creds", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != fakeECSAuth {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		k, ok := f.fetch()
		if !ok {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"code":"ServiceUnavailable","message":"ecs outage"}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"AccessKeyId": k.id, "SecretAccessKey": k.secret,
			"Token": k.token, "Expiration": k.expires.Format(time.RFC3339)})
	})
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", startRoleServer(t, f, mux)+"/creds")
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", fakeECSAuth)
}

// startSTS serves STS AssumeRoleWithWebIdentity, writes the token file and points
// AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN and AWS_ENDPOINT_URL_STS at them.
func startSTS(t *testing.T, f *roleFake) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.PostForm.Get("Action") != "AssumeRoleWithWebIdentity" ||
			r.PostForm.Get("RoleArn") != fakeRoleARN || r.PostForm.Get("RoleSessionName") == "" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f.set(func(f *roleFake) { f.sent = append(f.sent, r.PostForm.Get("WebIdentityToken")) })
		k, ok := f.fetch()
		w.Header().Set("Content-Type", "text/xml")
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `<ErrorResponse><Error><Type>Receiver</Type><Code>ServiceUnavailable</Code><Message>sts outage</Message></Error><RequestId>r1</RequestId></ErrorResponse>`)
			return
		}
		fmt.Fprintf(w, `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
<AssumeRoleWithWebIdentityResult>
<Credentials><AccessKeyId>%s</AccessKeyId><SecretAccessKey>%s</SecretAccessKey><SessionToken>%s</SessionToken><Expiration>%s</Expiration></Credentials>
<AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/wharf-test/s</Arn><AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser>
</AssumeRoleWithWebIdentityResult>
<ResponseMetadata><RequestId>r1</RequestId></ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>`, k.id, k.secret, k.token, k.expires.Format(time.RFC3339))
	})
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(fakeWebIdentity), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ENDPOINT_URL_STS", startRoleServer(t, f, h))
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tokenFile)
	t.Setenv("AWS_ROLE_ARN", fakeRoleARN)
}

// startIMDS serves IMDSv2 (a session token by PUT, then metadata GETs carrying it) and points
// AWS_EC2_METADATA_SERVICE_ENDPOINT at it. tokenStatus, when not 200, refuses the token.
func startIMDS(t *testing.T, f *roleFake, tokenStatus int) {
	const credsPath = "/latest/meta-data/iam/security-credentials/"
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /latest/api/token", func(w http.ResponseWriter, r *http.Request) {
		if tokenStatus != http.StatusOK || r.Header.Get("X-Aws-Ec2-Metadata-Token-Ttl-Seconds") == "" {
			w.WriteHeader(tokenStatus)
			return
		}
		f.set(func(f *roleFake) { f.tokens++ })
		w.Header().Set("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", "21600")
		fmt.Fprint(w, fakeIMDSToken)
	})
	mux.HandleFunc("GET "+credsPath+"{role...}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Aws-Ec2-Metadata-Token") != fakeIMDSToken {
			f.set(func(f *roleFake) { f.noToken++ })
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.PathValue("role") {
		case "":
			fmt.Fprintln(w, fakeIMDSRole)
			return
		case fakeIMDSRole:
		default:
			w.WriteHeader(http.StatusNotFound)
			return
		}
		k, ok := f.fetch()
		if !ok {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"Code": "Success", "Type": "AWS-HMAC",
			"LastUpdated": f.clk.now().Format(time.RFC3339), "AccessKeyId": k.id, "SecretAccessKey": k.secret,
			"Token": k.token, "Expiration": k.expires.Format(time.RFC3339)})
	})
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", startRoleServer(t, f, mux))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "false")
}

// roleStore opens a Bucket with credentials: role against a fresh fake S3, with the role
// provider on clk and its log in the returned buffer.
type roleStore struct {
	s3   *fakeS3
	b    *Bucket
	p    *roleProvider
	logs *lockedWriter
}

func openRole(t *testing.T, clk *fakeClock) *roleStore {
	t.Helper()
	rs := &roleStore{s3: &fakeS3{}, logs: &lockedWriter{w: &bytes.Buffer{}}}
	loc, _ := store.ParseURL("s3://bkt")
	cfg := testConfig{Options: Options{Endpoint: newServer(t, rs.s3), Credentials: "role"},
		Logger: slog.New(slog.NewTextHandler(rs.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if err := cfg.Options.Check(loc, cfg.common()); err != nil {
		t.Fatal(err)
	}
	b, err := New(context.Background(), loc, &cfg.Options, cfg.common())
	if err != nil {
		t.Fatal(err)
	}
	p, ok := b.api.(*s3.Client).Options().Credentials.(*roleProvider)
	if !ok {
		t.Fatalf("credentials provider is %T, want *roleProvider", b.api.(*s3.Client).Options().Credentials)
	}
	if clk != nil {
		p.now = clk.now
	}
	rs.b, rs.p = b, p
	return rs
}

// head makes one HEAD and returns the access key id it was signed with ("" if none was sent).
func (rs *roleStore) head(t *testing.T) (string, error) {
	t.Helper()
	n := rs.s3.total()
	_, err := rs.b.Head(context.Background(), "k")
	if rs.s3.total() == n {
		return "", err
	}
	rs.s3.mu.Lock()
	h := rs.s3.reqs[len(rs.s3.reqs)-1].header
	rs.s3.mu.Unlock()
	return signer(h), err
}

// mustSign makes one HEAD and fails unless it was signed with the keys numbered n of source.
func (rs *roleStore) mustSign(t *testing.T, source string, n int) {
	t.Helper()
	id, err := rs.head(t)
	if err != nil {
		t.Fatalf("head: %v", err)
	}
	want := keysOf(source, n)
	if id != want.id {
		t.Fatalf("signed with %q, want %q", id, want.id)
	}
	rs.s3.mu.Lock()
	tok := rs.s3.reqs[len(rs.s3.reqs)-1].header.Get("X-Amz-Security-Token")
	rs.s3.mu.Unlock()
	if tok != want.token {
		t.Fatalf("session token header does not belong to %s", want.id)
	}
}

// signer returns the access key id of a SigV4 Authorization header.
func signer(h http.Header) string {
	_, cred, ok := strings.Cut(h.Get("Authorization"), "Credential=")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(cred, "/")
	return id
}

// signers returns every access key id the fake S3 saw, in order.
func (f *fakeS3) signers() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.reqs {
		out = append(out, signer(r.header))
	}
	return out
}

// noSecrets fails if s holds any of the secret values.
func noSecrets(t *testing.T, what, s string, secrets []string) {
	t.Helper()
	for _, v := range secrets {
		if v != "" && strings.Contains(s, v) {
			t.Errorf("%s holds the secret %q: %s", what, v, s)
		}
	}
}

// lockedWriter serialises log writes from the refresh goroutine and the test.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}
