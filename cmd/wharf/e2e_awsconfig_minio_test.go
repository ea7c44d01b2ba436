package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
)

// The AWS configuration is read as the AWS tools read it: a profile's endpoint_url, and the
// S3 endpoint of the services section it names, send wharf to that endpoint with no flag.
func TestE2EAWSProfileEndpoint(t *testing.T) {
	srv := testenv.MinIO(t)
	keys := []string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey, "AWS_REGION=" + srv.Region}
	bucket := "s3://" + randomBucket(t)
	c, ep := minioCLI(t)
	c.run(t, append(ep, "mb", bucket)...).must(t, 0)
	dir := t.TempDir()
	config := filepath.Join(dir, "config")
	must(t, os.WriteFile(config, []byte(`[default]
endpoint_url = `+srv.Endpoint+`

[profile svc]
services = local-minio

[services local-minio]
s3 =
  endpoint_url = `+srv.Endpoint+`

[profile leaky]
endpoint_url = http://admin:planted-password-123@127.0.0.1:1
`), 0o600))
	for _, profile := range []string{"default", "svc"} {
		c := cli{env: append(keys, "AWS_CONFIG_FILE="+config, "AWS_PROFILE="+profile)}
		r := c.run(t, "--log-level", "debug", "ls", bucket)
		if r.code != 0 || !strings.Contains(r.err, srv.Endpoint) {
			t.Errorf("profile %s: exit %d, stderr %q: want a listing from the profile's endpoint %s", profile, r.code, r.err, srv.Endpoint)
		}
	}
	// --profile chooses the profile as AWS_PROFILE does (and wins over it), and, as aws-cli's,
	// reads that profile's keys, not the environment's; --endpoint-url is --endpoint.
	creds := filepath.Join(dir, "credentials")
	must(t, os.WriteFile(creds, []byte("[svc]\naws_access_key_id = "+srv.AccessKey+"\naws_secret_access_key = "+srv.SecretKey+"\n"), 0o600))
	files := []string{"AWS_CONFIG_FILE=" + config, "AWS_SHARED_CREDENTIALS_FILE=" + creds, "AWS_PROFILE=leaky", "AWS_REGION=" + srv.Region}
	for _, args := range [][]string{{"--profile", "svc"}, {"--endpoint-url", srv.Endpoint, "--profile", "svc"}} {
		r := cli{env: files}.run(t, append(args, "--log-level", "debug", "ls", bucket)...)
		if r.code != 0 || !strings.Contains(r.err, srv.Endpoint) {
			t.Errorf("%v with AWS_PROFILE=leaky: exit %d, stderr %q: want a listing from %s", args, r.code, r.err, srv.Endpoint)
		}
	}
	if r := (cli{env: keys}).run(t, "--endpoint-url", srv.Endpoint, "ls", bucket); r.code != 0 {
		t.Errorf("--endpoint-url: exit %d, stderr %q", r.code, r.err)
	}
	// The profile "default" has no keys: the error names the profile it read, and says the
	// environment's keys were passed over.
	r := cli{env: append(keys, files...)}.run(t, "--profile", "default", "ls", bucket).must(t, 2)
	if !strings.Contains(r.err, `profile "default" (given as the profile option`) || !strings.Contains(r.err, "[WHARF_CREDENTIALS_MISSING]") {
		t.Errorf("--profile default without keys: %q", r.err)
	}
	if r := (cli{env: keys}).run(t, "--profile", "svc", "ls", t.TempDir()); r.code != 2 || !strings.Contains(r.err, "--profile") {
		t.Errorf("--profile on a local path: exit %d, stderr %q: want exit 2 naming --profile", r.code, r.err)
	}
	// An endpoint with a password in a profile is refused before any connection, redacted.
	leaky := cli{env: append(keys, "AWS_CONFIG_FILE="+config, "AWS_PROFILE=leaky")}
	r = leaky.run(t, "ls", bucket).must(t, 2)
	if !strings.Contains(r.err, "[WHARF_CREDENTIAL_LITERAL]") || strings.Contains(r.out+r.err, "planted-password-123") {
		t.Errorf("a profile endpoint with a password: %q", r.err)
	}
}

// With no credentials anywhere, wharf says so at once, naming every source it tried, and
// sends nothing.
func TestE2EMissingCredentialsNamed(t *testing.T) {
	_, ep := minioCLI(t)
	home := t.TempDir()
	c := cli{env: []string{"HOME=" + home, "AWS_REGION=us-east-1"}}
	for _, args := range [][]string{{"ls", "s3://some-bucket"}, {"cat", "s3://some-bucket/k"}} {
		r := c.run(t, append(ep, args...)...).must(t, 2)
		for _, want := range []string{"[WHARF_CREDENTIALS_MISSING]", "AWS_ACCESS_KEY_ID", "profile \"default\"", "EC2 instance metadata"} {
			if !strings.Contains(r.err, want) {
				t.Errorf("%v without credentials: %q lacks %q", args, r.err, want)
			}
		}
	}
}
