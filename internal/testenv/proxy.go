package testenv

import (
	"testing"

	"github.com/wharfdata/wharf/internal/faultproxy"
)

// FaultProxy starts a fault-injecting proxy in front of s for the test t (closed when t
// ends) and returns it with a copy of s whose Endpoint is the proxy. The proxy holds s's keys,
// so it can re-sign requests whose conditions it strips (see faultproxy.StripConditions).
func FaultProxy(t testing.TB, s S3Server) (*faultproxy.Proxy, S3Server) {
	t.Helper()
	p := faultproxy.New(t, s.Endpoint, faultproxy.Options{AccessKey: s.AccessKey, SecretKey: s.SecretKey})
	s.Endpoint = p.URL()
	return p, s
}
