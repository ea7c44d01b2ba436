package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"
)

// fetch GETs u (a loopback URL) with no credentials and returns the status and body.
func fetch(t *testing.T, u string) (int, string) {
	t.Helper()
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("a signed URL off loopback: %s", u)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// presignAndRead uploads body to obj, presigns it, and checks that the URL reads it with no
// credentials.
func presignAndRead(t *testing.T, w func(args ...string) result, obj, body, signVia string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f": body})
	w("cp", filepath.Join(dir, "f"), obj).must(t, 0)
	u := strings.TrimSpace(w("presign", "--expires-in", "10m", signVia).must(t, 0).out)
	if code, got := fetch(t, u); code != 200 || got != body {
		t.Fatalf("GET of the signed URL: %d %q; want 200 %q", code, got, body)
	}
	return u
}

// wharf presign on MinIO: the URL reads the object with no credentials, stops reading it once
// expired, and is refused for a tampered key; an anonymous store cannot sign.
func TestE2EMinIOPresign(t *testing.T) {
	c, ep := minioCLI(t)
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	bucket := "s3://" + randomBucket(t)
	w("mb", bucket).must(t, 0)
	u := presignAndRead(t, w, bucket+"/r/report.csv", "a,b\n", bucket+"/r/report.csv")
	if code, _ := fetch(t, strings.Replace(u, "report.csv", "other.csv", 1)); code != 403 {
		t.Errorf("the URL with another key: %d, want 403", code)
	}
	var res presignResult
	r := w("--format", "json", "presign", "--expires-in", "1", bucket+"/r/report.csv").must(t, 0)
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || res.URL == "" || time.Until(res.Expires) > 2*time.Second {
		t.Fatalf("presign --format json: %q %v", r.out, err)
	}
	time.Sleep(2500 * time.Millisecond)
	if code, _ := fetch(t, res.URL); code != 403 {
		t.Errorf("an expired URL: %d, want 403", code)
	}
	if r := w("--anonymous", "presign", bucket+"/r/report.csv"); r.code != 1 || !strings.Contains(r.err, "WHARF_UNSUPPORTED") {
		t.Errorf("presign on an anonymous store: exit %d, stderr %q", r.code, r.err)
	}
	if r := w("presign", "--expires-in", "8d", bucket+"/r/report.csv"); r.code != 2 {
		t.Errorf("--expires-in 8d: exit %d, want 2 (not a duration Go reads)", r.code)
	}
	if r := w("presign", "--expires-in", "200h", bucket+"/r/report.csv"); r.code == 0 || !strings.Contains(r.err, "7 days") {
		t.Errorf("--expires-in 200h: exit %d, stderr %q; want S3's 7-day limit named", r.code, r.err)
	}
}

// wharf presign on Azurite: a read-only SAS that reads the blob with no credentials.
func TestE2EAzuritePresign(t *testing.T) {
	c, ep, srv := azuriteCLI(t)
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	root := "az://" + srv.Account + "/" + randomBucket(t)
	w("mb", root).must(t, 0)
	u := presignAndRead(t, w, root+"/r/report.csv", "a,b\n", root+"/r/report.csv")
	if !strings.Contains(u, "sig=") || !strings.Contains(u, "sp=r") {
		t.Errorf("the SAS URL %q holds no read-only signature", u)
	}
}

// wharf presign on fake-gcs-server: a V4 signed URL made with a service-account key (one the
// test makes; nothing asks Google for a token, since signing sends nothing), at the
// emulator's host; it reads the object. Without a key the store cannot sign.
func TestE2EFakeGCSPresign(t *testing.T) {
	srv := testenv.FakeGCS(t)
	pk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "test", "client_email": "signer@test.iam.gserviceaccount.com",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"token_uri":   "http://127.0.0.1:9/token", // never asked: signing sends nothing
	})
	keyFile := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf(`stores:
  open:   {backend: gs, endpoint: %s, anonymous: true}
  signer: {backend: gs, endpoint: %s, service_account_file: "file://%s"}
`, srv.Endpoint, srv.Endpoint, keyFile))
	c := cli{}
	w := func(args ...string) result { t.Helper(); return c.run(t, append([]string{"-c", cfg}, args...)...) }
	name := randomBucket(t)
	w("mb", "open://"+name).must(t, 0)
	u := presignAndRead(t, w, "open://"+name+"/r/report.csv", "a,b\n", "signer://"+name+"/r/report.csv")
	if !strings.Contains(u, "X-Goog-Signature=") || !strings.Contains(u, "signer%40test.iam.gserviceaccount.com") {
		t.Errorf("the signed URL %q lacks a V4 signature by the key's account", u)
	}
	if r := w("presign", "open://"+name+"/r/report.csv"); r.code != 1 || !strings.Contains(r.err, "WHARF_UNSUPPORTED") || strings.Contains(r.err, "PRIVATE KEY") {
		t.Errorf("presign without a key: exit %d, stderr %q", r.code, r.err)
	}
}
