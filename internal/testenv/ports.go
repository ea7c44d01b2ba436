package testenv

import (
	"net"
	"testing"
)

// FreeLoopbackPort returns a TCP port on 127.0.0.1 that was free a moment ago, for a test
// that must name a port before something listens on it. Prefer listening on 127.0.0.1:0
// where the code allows it: another process may take the port in between.
func FreeLoopbackPort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: find a free loopback port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
