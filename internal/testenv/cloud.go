package testenv

import (
	"os"
	"testing"
)

// GCSServer is fake-gcs-server on loopback. It takes no credentials (use anonymous access).
type GCSServer struct {
	Endpoint string // http://127.0.0.1:PORT
}

// FakeGCS returns the fake-gcs-server that scripts/test.sh started (WHARF_TEST_FAKEGCS_ENDPOINT),
// or fails/skips t (see Missing).
func FakeGCS(t testing.TB) GCSServer {
	t.Helper()
	s := GCSServer{Endpoint: os.Getenv("WHARF_TEST_FAKEGCS_ENDPOINT")}
	if s.Endpoint == "" {
		Missing(t, "fake-gcs-server")
	}
	return s
}

// AzureServer is Azurite's blob service on loopback, with one account whose key was made at
// random for this run. Azurite also serves the well-known development account
// (DevAccount, DevKey).
type AzureServer struct {
	Endpoint string // http://127.0.0.1:PORT (path-style: the account is the first path segment)
	Account  string
	Key      string // base64, as Azure gives account keys
}

// The development account every Azure tool knows (Azurite's default), also served by the
// Azurite that scripts/test.sh starts.
const (
	AzuriteDevAccount = "devstoreaccount1"
	AzuriteDevKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Azurite returns the Azurite that scripts/test.sh started (WHARF_TEST_AZURITE_ENDPOINT,
// _ACCOUNT, _KEY), or fails/skips t (see Missing).
func Azurite(t testing.TB) AzureServer {
	t.Helper()
	s := AzureServer{
		Endpoint: os.Getenv("WHARF_TEST_AZURITE_ENDPOINT"),
		Account:  os.Getenv("WHARF_TEST_AZURITE_ACCOUNT"),
		Key:      os.Getenv("WHARF_TEST_AZURITE_KEY"),
	}
	if s.Endpoint == "" || s.Account == "" || s.Key == "" {
		Missing(t, "azurite")
	}
	return s
}

// KeyRef writes the account key to a file in a test temp dir and returns a file:// reference.
func (s AzureServer) KeyRef(t testing.TB) string {
	t.Helper()
	p := t.TempDir() + "/azure-key"
	if err := os.WriteFile(p, []byte(s.Key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return "file://" + p
}
