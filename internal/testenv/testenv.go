// Package testenv gives tests the real servers that scripts/test.sh installed and started.
//
// scripts/test.sh exports, for each server, WHARF_TEST_<NAME>_ENDPOINT (and for S3 servers
// _ACCESS_KEY and _SECRET_KEY), and sets WHARF_TEST_SERVERS=1. Under the script a missing
// server fails the test; under a plain `go test ./...` the test is skipped with a message that
// says how to run it.
//
// FakeGCS and Azurite return the cloud emulators the same way; NATS returns the three-node
// JetStream cluster, with KillNode to take one node down and bring it back.
// Chromium, Promtool and Icebird return the tools a test runs (WHARF_TEST_CHROMIUM, _PROMTOOL,
// _ICEBIRD) the same way.
//
// scripts/servers.sh starts the same servers once for quick runs of `go test` while developing.
// FaultProxy puts an internal/faultproxy proxy in front of a server; FreeLoopbackPort finds a
// port for a test that must name one before listening.
package testenv

import (
	"os"
	"testing"

	"github.com/wharfdata/wharf/store"
)

// S3Server is an S3-compatible server on loopback.
type S3Server struct {
	Name      string // "minio", "seaweedfs"
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Region    string
}

// Required reports whether the run requires every server (scripts/test.sh sets it).
func Required() bool { return os.Getenv("WHARF_TEST_SERVERS") == "1" }

// Missing fails t when servers are required and skips it otherwise.
func Missing(t testing.TB, what string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s is not running: scripts/test.sh should have started it (WHARF_TEST_SERVERS=1)", what)
	}
	t.Skipf("%s not available: run scripts/test.sh to start the real servers", what)
}

// MinIO returns the MinIO server, or fails/skips t (see Missing).
func MinIO(t testing.TB) S3Server { t.Helper(); return s3Server(t, "minio", "MINIO") }

// SeaweedFS returns the SeaweedFS S3 gateway, or fails/skips t (see Missing).
func SeaweedFS(t testing.TB) S3Server { t.Helper(); return s3Server(t, "seaweedfs", "SEAWEEDFS") }

// S3Servers returns every S3 server the run has: MinIO and SeaweedFS.
func S3Servers(t testing.TB) []S3Server {
	t.Helper()
	return []S3Server{MinIO(t), SeaweedFS(t)}
}

func s3Server(t testing.TB, name, env string) S3Server {
	t.Helper()
	s := S3Server{
		Name:      name,
		Endpoint:  os.Getenv("WHARF_TEST_" + env + "_ENDPOINT"),
		AccessKey: os.Getenv("WHARF_TEST_" + env + "_ACCESS_KEY"),
		SecretKey: os.Getenv("WHARF_TEST_" + env + "_SECRET_KEY"),
		Region:    "us-east-1",
	}
	if s.Endpoint == "" {
		Missing(t, name)
	}
	return s
}

// Refs writes the server's keys to files in a test temp dir and returns file:// references to
// them, the only form wharf's config accepts.
func (s S3Server) Refs(t testing.TB) (accessKeyRef, secretKeyRef string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, v string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return "file://" + p
	}
	return write("access-key", s.AccessKey), write("secret-key", s.SecretKey)
}

// StoreConfig returns how to open this server's buckets as an s3:// store: its endpoint,
// region and keys (as file:// references), with the process's environment.
func (s S3Server) StoreConfig(t testing.TB) *store.Config {
	t.Helper()
	ak, sk := s.Refs(t)
	return &store.Config{Getenv: os.Getenv, Set: []store.Setting{
		{Name: "endpoint", Value: s.Endpoint}, {Name: "region", Value: s.Region},
		{Name: "access_key_id", Value: ak}, {Name: "secret_access_key", Value: sk},
	}}
}
