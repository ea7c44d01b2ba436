package testenv

import (
	"os"
	"testing"
)

// Chromium returns the path of the browser the status page's test drives headless
// (WHARF_TEST_CHROMIUM, Debian's chromium that scripts/test.sh installs), or fails/skips t
// (see Missing).
func Chromium(t testing.TB) string { t.Helper(); return tool(t, "chromium", "WHARF_TEST_CHROMIUM") }

// Promtool returns the path of Prometheus's promtool (WHARF_TEST_PROMTOOL, from Debian's
// prometheus package that scripts/test.sh installs), or fails/skips t (see Missing).
func Promtool(t testing.TB) string { t.Helper(); return tool(t, "promtool", "WHARF_TEST_PROMTOOL") }

// Icebird returns the folder holding node_modules/icebird, the JavaScript Iceberg reader that
// internal/icebird runs with node (WHARF_TEST_ICEBIRD, installed from npm into the test cache
// by scripts/install-servers.sh), or fails/skips t (see Missing).
func Icebird(t testing.TB) string { t.Helper(); return tool(t, "icebird", "WHARF_TEST_ICEBIRD") }

func tool(t testing.TB, name, env string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		Missing(t, name+" ("+env+")")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: %v", env, p, err)
	}
	return p
}
