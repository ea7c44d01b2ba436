package faultproxy_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/wharfdata/wharf/internal/faultproxy"
)

const testAccess, testSecret = "AKIDFAULTPROXY", "faultproxy-secret-key"

// signedPut returns a PUT to url signed as the AWS SDK for Go v2 signs S3 requests, with the
// extra headers set before signing.
func signedPut(t *testing.T, url, body string, when time.Time, extra map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	req.Header.Set("X-Amz-Meta-Wharf-Put-Id", "p1")
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	creds := aws.Credentials{AccessKeyID: testAccess, SecretAccessKey: testSecret}
	s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := s.SignHTTP(context.Background(), creds, req, hash, "s3", "us-east-1", when); err != nil {
		t.Fatal(err)
	}
	return req
}

func TestStripConditionsUnsigned(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{})
	p.StripConditions(true)
	req, _ := http.NewRequest("PUT", p.URL()+"/b/k", strings.NewReader("x"))
	req.Header.Set("If-None-Match", "*")
	req.Header.Set("If-Match", `"e1"`)
	req.Header.Set("X-Keep", "yes")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	seen := b.requests()
	if len(seen) != 1 || seen[0].Header.Get("If-None-Match") != "" || seen[0].Header.Get("If-Match") != "" ||
		seen[0].Header.Get("X-Keep") != "yes" {
		t.Fatalf("backend saw headers %v", seen[0].Header)
	}
	rec := p.Requests()[0]
	if !rec.Stripped || rec.Header.Get("If-None-Match") != "*" {
		t.Errorf("record %+v should keep the client's headers and say they were stripped", rec)
	}
	p.StripConditions(false)
	req, _ = http.NewRequest("PUT", p.URL()+"/b/k", strings.NewReader("x"))
	req.Header.Set("If-None-Match", "*")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := b.requests()[1].Header.Get("If-None-Match"); got != "*" {
		t.Errorf("with stripping off the backend saw If-None-Match %q", got)
	}
}

// The re-signed request must carry exactly the signature the client would have made without
// the condition.
func TestStripConditionsResigns(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{AccessKey: testAccess, SecretKey: testSecret})
	p.StripConditions(true)
	when := time.Now().UTC().Truncate(time.Second)
	url := p.URL() + "/bucket/dir/a%20key?x-id=PutObject"
	plain := signedPut(t, url, "body", when, nil)
	cond := signedPut(t, url, "body", when, map[string]string{"If-None-Match": "*"})
	if !strings.Contains(cond.Header.Get("Authorization"), "if-none-match") {
		t.Fatalf("the SDK signer did not sign If-None-Match: %s", cond.Header.Get("Authorization"))
	}
	resp, err := http.DefaultClient.Do(cond)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	seen := b.requests()
	if len(seen) != 1 {
		t.Fatalf("backend saw %d requests", len(seen))
	}
	if got, want := seen[0].Header.Get("Authorization"), plain.Header.Get("Authorization"); got != want {
		t.Errorf("re-signed Authorization\n got %s\nwant %s", got, want)
	}
	if seen[0].Header.Get("If-None-Match") != "" {
		t.Error("If-None-Match was forwarded")
	}
}

func TestStripConditionsSignedWithoutKeys(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{})
	p.StripConditions(true)
	req := signedPut(t, p.URL()+"/b/k", "body", time.Now(), map[string]string{"If-Match": `"e"`})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || !strings.Contains(string(body), "FaultProxyCannotResign") {
		t.Errorf("got %d %s", resp.StatusCode, body)
	}
	if strings.Contains(string(body), testSecret) {
		t.Error("the error body names the secret key")
	}
	if len(b.requests()) != 0 {
		t.Error("a request that could not be re-signed reached the backend")
	}
}

func TestStripConditionsMalformedSignature(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{AccessKey: testAccess, SecretKey: testSecret})
	p.StripConditions(true)
	for _, auth := range []string{
		"AWS4-HMAC-SHA256 garbage",
		"AWS4-HMAC-SHA256 Credential=a/b/c, SignedHeaders=host;if-match, Signature=00",
		"AWS4-HMAC-SHA256 Credential=OTHER/20260101/us-east-1/s3/aws4_request, SignedHeaders=host;if-match, Signature=00",
	} {
		req, _ := http.NewRequest("PUT", p.URL()+"/b/k", strings.NewReader("x"))
		req.Header.Set("If-Match", `"e"`)
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 500 || !strings.Contains(string(body), "FaultProxyCannotResign") {
			t.Errorf("Authorization %q: got %d %s", auth, resp.StatusCode, body)
		}
	}
	if len(b.requests()) != 0 {
		t.Error("a request that could not be re-signed reached the backend")
	}
}
