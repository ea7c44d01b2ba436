package testenv

import (
	"database/sql"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
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

// URLFor is the server's URL for database db ("" for the server's own).
func (s PostgresServer) URLFor(t testing.TB, db string) string {
	t.Helper()
	if db == "" {
		return s.URL
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	return u.String()
}

// DB opens database db ("" for the server's own) with the password; it is closed when t ends.
func (s PostgresServer) DB(t testing.TB, db string) *sql.DB {
	t.Helper()
	cfg, err := pgx.ParseConfig(s.URLFor(t, db))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Password = s.Password
	c := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { c.Close() })
	return c
}
