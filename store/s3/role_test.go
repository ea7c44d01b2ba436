package s3

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
)

// noRoleEnv unsets every role source.
func noRoleEnv(t *testing.T) {
	for _, k := range []string{"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

func TestRoleUnavailableNamesEverySource(t *testing.T) {
	noRoleEnv(t)
	f := &fakeS3{}
	srv := newServer(t, f)
	loc, _ := store.ParseURL("s3://bkt")
	cfg := store.Config{Endpoint: srv, Credentials: "role"}
	if err := cfg.Check(loc); err != nil {
		t.Fatal(err)
	}
	b, err := New(context.Background(), loc, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Head(context.Background(), "k")
	if !errors.Is(err, store.ErrRoleUnavailable) {
		t.Fatalf("err = %v, want ErrRoleUnavailable", err)
	}
	for _, src := range []string{"ECS container endpoint", "STS web identity", "IMDSv2"} {
		if !strings.Contains(err.Error(), src) {
			t.Errorf("error does not name %s: %v", src, err)
		}
	}
	if f.total() != 0 {
		t.Errorf("%d unsigned requests sent", f.total())
	}
}

func TestRoleFromContainerEndpoint(t *testing.T) {
	noRoleEnv(t)
	creds := http.NewServeMux()
	creds.HandleFunc("/creds", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "tok" {
			w.WriteHeader(401)
			return
		}
		exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		w.Write([]byte(`{"AccessKeyId":"AKIDROLE","SecretAccessKey":"role-secret","Token":"t","Expiration":"` + exp + `"}`))
	})
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", newServer(t, creds)+"/creds")
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "tok")
	f := &fakeS3{}
	loc, _ := store.ParseURL("s3://bkt")
	cfg := store.Config{Endpoint: newServer(t, f), Credentials: "role"}
	b, err := New(context.Background(), loc, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Head(context.Background(), "k"); err != nil {
		t.Fatal(err)
	}
	if auth := f.requests("head")[0].header.Get("Authorization"); !strings.Contains(auth, "AKIDROLE") {
		t.Fatalf("request not signed with the role's key: %q", auth)
	}
}

func TestAttemptTimeoutIsTransport(t *testing.T) {
	f, b := newFake(t, store.Config{})
	f.hook = func(w http.ResponseWriter, r *http.Request, kind string, n int) bool {
		time.Sleep(300 * time.Millisecond)
		return false
	}
	p := store.DefaultRetryPolicy()
	p.ResponseTimeouts = []time.Duration{50 * time.Millisecond}
	p.TransportAttempts = 2
	_, err := store.Retry(b, p).Head(context.Background(), "k")
	if !errors.Is(err, store.ErrUnavailable) || store.IsContext(err) {
		t.Fatalf("err = %v, want ErrUnavailable after transport faults", err)
	}
	if n := len(f.requests("head")); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
}
