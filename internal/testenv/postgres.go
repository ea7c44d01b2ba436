package testenv

import (
	"os"
	"testing"
)

// PostgresServer is a PostgreSQL server on loopback.
type PostgresServer struct {
	URL      string // postgres://user@127.0.0.1:PORT/db, without a password
	Password string // may be empty (trust authentication)
}

// Postgres returns the PostgreSQL server that scripts/test.sh started
// (WHARF_TEST_POSTGRES_URL, WHARF_TEST_POSTGRES_PASSWORD), or fails/skips t (see Missing).
func Postgres(t testing.TB) PostgresServer {
	t.Helper()
	s := PostgresServer{URL: os.Getenv("WHARF_TEST_POSTGRES_URL"), Password: os.Getenv("WHARF_TEST_POSTGRES_PASSWORD")}
	if s.URL == "" {
		Missing(t, "postgres")
	}
	return s
}

// PasswordRef writes the password to a file in a test temp dir and returns a file://
// reference to it, or "" when the server has no password.
func (s PostgresServer) PasswordRef(t testing.TB) string {
	t.Helper()
	if s.Password == "" {
		return ""
	}
	p := t.TempDir() + "/pg-password"
	if err := os.WriteFile(p, []byte(s.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return "file://" + p
}
