package main

import (
	"strings"
	"testing"
)

// The endpoint waivers through the binary, refused before any connection: a plaintext
// endpoint outside this machine names allow_http as the way to use it on purpose, and
// allow_anonymous without anonymous is a credential conflict. (Neither test connects
// anywhere: the checks run before the first request.)
func TestE2EEndpointWaiversAreCheckedBeforeAnyConnection(t *testing.T) {
	cfg := writeConfig(t, `stores:
  plain: {backend: s3, endpoint: "http://10.0.0.5:9000", anonymous: true}
  half:  {backend: s3, endpoint: "https://data.example.org", allow_anonymous: true}
  azhalf: {backend: az, endpoint: "https://blob.example.org", allow_anonymous: true}
`)
	c := cli{}
	r := c.run(t, "-c", cfg, "ls", "plain://bucket/")
	if r.code != 2 || !strings.Contains(r.err, "WHARF_ENDPOINT_INSECURE") || !strings.Contains(r.err, "allow_http") {
		t.Errorf("plaintext endpoint outside this machine: exit %d, stderr %q", r.code, r.err)
	}
	for _, u := range []string{"half://bucket/", "azhalf://acct/container/"} {
		r = c.run(t, "-c", cfg, "ls", u)
		if r.code != 2 || !strings.Contains(r.err, "WHARF_CREDENTIAL_CONFLICT") || !strings.Contains(r.err, "allow_anonymous") {
			t.Errorf("%s: allow_anonymous without anonymous: exit %d, stderr %q", u, r.code, r.err)
		}
	}
}
