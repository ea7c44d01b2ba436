package s3

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

func TestRoleUnavailableNamesEverySource(t *testing.T) {
	noRoleEnv(t)
	rs := openRole(t, nil)
	_, err := rs.head(t)
	if !errors.Is(err, driver.ErrRoleUnavailable) {
		t.Fatalf("err = %v, want ErrRoleUnavailable", err)
	}
	for _, want := range []string{
		sourceECS + " (not configured: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI are not set)",
		sourceWebIdentity + " (not configured: AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN are not both set)",
		sourceIMDS + " (not configured: AWS_EC2_METADATA_DISABLED=true)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	if rs.s3.total() != 0 {
		t.Errorf("%d unsigned requests sent", rs.s3.total())
	}
}

// Every source configured and failing: the error names each with its own failure, holds no
// secret, and IMDS, refused a session token, does not fall back to IMDSv1.
func TestRoleUnavailableWhenEverySourceFails(t *testing.T) {
	noRoleEnv(t)
	clk := newClock()
	ecs := &roleFake{name: "ecs", clk: clk, ttl: time.Hour, fail: true}
	sts := &roleFake{name: "sts", clk: clk, ttl: time.Hour, fail: true}
	md := &roleFake{name: "imds", clk: clk, ttl: time.Hour}
	startECS(t, ecs)
	startSTS(t, sts)
	startIMDS(t, md, http.StatusForbidden)
	rs := openRole(t, clk)
	_, err := rs.head(t)
	if !errors.Is(err, driver.ErrRoleUnavailable) {
		t.Fatalf("err = %v, want ErrRoleUnavailable", err)
	}
	msg := err.Error()
	for _, want := range []string{sourceECS + " (", "ecs outage", sourceWebIdentity + " (", "sts outage",
		sourceIMDS + " (", "getToken", "403"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not say %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "not configured") {
		t.Errorf("a configured source reported as not configured: %s", msg)
	}
	if ecs.count() != 1 || sts.count() != 1 {
		t.Errorf("fetches: ecs %d, sts %d; want 1 each (one attempt per source)", ecs.count(), sts.count())
	}
	if noToken := md.get(func(f *roleFake) int { return f.noToken }); noToken != 0 || md.count() != 0 {
		t.Errorf("IMDS without a session token: %d metadata requests, %d fetches; want none (IMDSv2 only)", noToken, md.count())
	}
	noSecrets(t, "error", msg, append(ecs.secrets(), sts.secrets()...))
	if rs.s3.total() != 0 {
		t.Errorf("%d requests sent without credentials", rs.s3.total())
	}
}

func TestRoleFromContainerEndpoint(t *testing.T) {
	noRoleEnv(t)
	ecs := &roleFake{name: "ecs", clk: newClock(), ttl: time.Hour}
	startECS(t, ecs)
	rs := openRole(t, ecs.clk)
	rs.mustSign(t, "ecs", 1)
	rs.mustSign(t, "ecs", 1)
	if n := ecs.count(); n != 1 {
		t.Errorf("%d fetches for two requests, want 1 (cached)", n)
	}
}

// The container endpoint's token may come from a file, read at each fetch (EKS Pod Identity).
func TestRoleContainerTokenFile(t *testing.T) {
	noRoleEnv(t)
	ecs := &roleFake{name: "ecs", clk: newClock(), ttl: time.Hour}
	startECS(t, ecs)
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "wrong-token")
	file := t.TempDir() + "/token"
	if err := os.WriteFile(file, []byte(fakeECSAuth+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", file)
	rs := openRole(t, ecs.clk)
	rs.mustSign(t, "ecs", 1)
}

func TestRoleFromWebIdentity(t *testing.T) {
	noRoleEnv(t)
	sts := &roleFake{name: "sts", clk: newClock(), ttl: time.Hour}
	startSTS(t, sts)
	t.Setenv("AWS_ROLE_SESSION_NAME", "wharf-session")
	rs := openRole(t, sts.clk)
	rs.mustSign(t, "sts", 1)
	sent := sts.get(func(f *roleFake) int { return len(f.sent) })
	if sent != 1 || sts.sent[0] != fakeWebIdentity {
		t.Fatalf("STS was sent tokens %q, want the token file's content once", sts.sent)
	}
}

func TestRoleFromIMDSv2(t *testing.T) {
	noRoleEnv(t)
	md := &roleFake{name: "imds", clk: newClock(), ttl: time.Hour}
	startIMDS(t, md, http.StatusOK)
	rs := openRole(t, md.clk)
	rs.mustSign(t, "imds", 1)
	tokens, noToken := md.get(func(f *roleFake) int { return f.tokens }), md.get(func(f *roleFake) int { return f.noToken })
	if tokens != 1 || noToken != 0 {
		t.Fatalf("IMDS: %d session tokens, %d requests without one; want 1 and 0", tokens, noToken)
	}
}

// The first source that answers wins, in order: ECS, then web identity, then IMDS; a failing
// source is passed over, and the sources after the winner are not asked.
func TestRoleSourceOrder(t *testing.T) {
	cases := []struct {
		name       string
		ecs, sts   string // "": absent, "ok", "fail"
		imds       bool
		want       string
		wantFetch  map[string]int
		wantReason string
	}{
		{"ecs before imds", "ok", "", true, "ecs", map[string]int{"ecs": 1, "imds": 0}, ""},
		{"ecs before web identity", "ok", "ok", true, "ecs", map[string]int{"ecs": 1, "sts": 0, "imds": 0}, ""},
		{"web identity before imds", "", "ok", true, "sts", map[string]int{"sts": 1, "imds": 0}, ""},
		{"failing ecs passed over", "fail", "ok", true, "sts", map[string]int{"ecs": 1, "sts": 1, "imds": 0}, ""},
		{"imds last", "", "", true, "imds", map[string]int{"imds": 1}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			noRoleEnv(t)
			clk := newClock()
			fakes := map[string]*roleFake{}
			if c.ecs != "" {
				fakes["ecs"] = &roleFake{name: "ecs", clk: clk, ttl: time.Hour, fail: c.ecs == "fail"}
				startECS(t, fakes["ecs"])
			}
			if c.sts != "" {
				fakes["sts"] = &roleFake{name: "sts", clk: clk, ttl: time.Hour, fail: c.sts == "fail"}
				startSTS(t, fakes["sts"])
			}
			if c.imds {
				fakes["imds"] = &roleFake{name: "imds", clk: clk, ttl: time.Hour}
				startIMDS(t, fakes["imds"], http.StatusOK)
			}
			rs := openRole(t, clk)
			rs.mustSign(t, c.want, 1)
			for name, n := range c.wantFetch {
				if got := fakes[name].count(); got != n {
					t.Errorf("%s: %d fetches, want %d", name, got, n)
				}
			}
		})
	}
}

// Plain http off loopback is refused for the container endpoint (as the SDK does) and for an
// STS endpoint override (the web identity token would travel in clear); nothing is sent.
func TestRoleRefusesPlaintextOffLoopback(t *testing.T) {
	noRoleEnv(t)
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://192.0.2.10/creds")
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent/token")
	t.Setenv("AWS_ROLE_ARN", fakeRoleARN)
	t.Setenv("AWS_ENDPOINT_URL_STS", "http://192.0.2.11")
	rs := openRole(t, nil)
	_, err := rs.head(t)
	if !errors.Is(err, driver.ErrRoleUnavailable) {
		t.Fatalf("err = %v, want ErrRoleUnavailable", err)
	}
	for _, want := range []string{"http to 192.0.2.10", "STS endpoint override", "192.0.2.11 is not loopback"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	for _, s := range rs.p.sources[:2] {
		if s.provider != nil {
			t.Errorf("%s is configured off loopback over http", s.name)
		}
	}
}

func TestRoleContainerURIRule(t *testing.T) {
	for uri, ok := range map[string]bool{
		"http://127.0.0.1:8080/creds":    true,
		"http://localhost/creds":         true,
		"http://[::1]/creds":             true,
		"http://169.254.170.2/v2/creds":  true,
		"http://169.254.170.23/v1/creds": true,
		"http://[fd00:ec2::23]/v1/creds": true,
		"https://creds.example.com/x":    true,
		"http://creds.example.com/x":     false,
		"http://169.254.169.254/latest":  false,
		"ftp://127.0.0.1/creds":          false,
		"not a url":                      false,
	} {
		if err := checkContainerURI(uri); (err == nil) != ok {
			t.Errorf("checkContainerURI(%q) = %v, want ok=%v", uri, err, ok)
		}
	}
}

// Keys beside credentials: role are a conflict, refused before anything opens.
func TestRoleCredentialConflict(t *testing.T) {
	loc, _ := store.ParseURL("s3://bkt")
	for name, o := range map[string]Options{
		"access keys":   {Credentials: "role", AccessKeyID: "env://A", SecretAccessKey: "env://B"},
		"session token": {Credentials: "role", SessionToken: "env://T"},
		"anonymous":     {Credentials: "role", Anonymous: true},
	} {
		err := o.Check(loc, &driver.Common{})
		if !errors.Is(err, driver.ErrCredentialConflict) || !strings.Contains(err.Error(), "role") {
			t.Errorf("%s: err = %v, want ErrCredentialConflict naming role", name, err)
		}
	}
}

func TestAttemptTimeoutIsTransport(t *testing.T) {
	f, b := newFake(t, testConfig{})
	f.hook = func(w http.ResponseWriter, r *http.Request, kind string, n int) bool {
		time.Sleep(300 * time.Millisecond)
		return false
	}
	p := store.DefaultRetryPolicy()
	p.ResponseTimeouts = []time.Duration{50 * time.Millisecond}
	p.TransportAttempts = 2
	_, err := store.New(b, p).Head(context.Background(), "k")
	if !errors.Is(err, store.ErrUnavailable) || store.IsContext(err) {
		t.Fatalf("err = %v, want ErrUnavailable after transport faults", err)
	}
	if n := len(f.requests("head")); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
}
