package export

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/wharfdata/wharf/internal/secret"
	"github.com/wharfdata/wharf/store"
)

type pgDialect struct {
	host     string // host:port/db, for messages
	password secret.Value
}

func (pgDialect) name() string               { return "postgres" }
func (pgDialect) param(n int) string         { return "$" + strconv.Itoa(n) }
func (pgDialect) boundExpr(c string) string  { return c }
func (pgDialect) selectExpr(c string) string { return c }

// classify maps pgx errors by SQLSTATE; the password is scrubbed from any message.
func (d pgDialect) classify(err error, what string) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	err = d.scrub(oneLine(err))
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "42P01", "42703", "3F000": // undefined table, column, schema
			return newErr("schema", what, ErrSourceNotFound, err)
		case "28P01", "28000", "3D000": // bad password, no such role, no such database
			return newErr("open-source", "postgres "+d.host, ErrSourceUnavailable, err)
		}
		return newErr("read", what, ErrSourceRead, err)
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) {
		return newErr("open-source", "postgres "+d.host, ErrSourceUnavailable, err)
	}
	return newErr("read", what, ErrSourceRead, err)
}

// scrub replaces the password in err's message, should a driver ever echo it.
func (d pgDialect) scrub(err error) error {
	pw := d.password.Reveal()
	if pw == "" || !strings.Contains(err.Error(), pw) {
		return err
	}
	return scrubbed{msg: strings.ReplaceAll(err.Error(), pw, secret.Redacted)}
}

type scrubbed struct{ msg string }

func (s scrubbed) Error() string { return s.msg }

// oneLine rewrites pgx's connection failure, which spreads one line per attempt over several
// tab-indented lines, as one line, and drops the TLS attempt's refusal when the server said
// no to TLS and a plaintext attempt followed (sslmode=prefer): the later attempt's answer is
// the one that matters. The cause stays reachable with errors.As.
func oneLine(err error) error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return err
	}
	var attempts []error
	if j, ok := ce.Unwrap().(interface{ Unwrap() []error }); ok {
		attempts = j.Unwrap()
	} else {
		attempts = []error{ce.Unwrap()}
	}
	var msgs []string
	for _, a := range attempts {
		m := strings.Join(strings.Fields(a.Error()), " ")
		if len(attempts) > 1 && strings.Contains(m, "server refused TLS connection") || slices.Contains(msgs, m) {
			continue
		}
		msgs = append(msgs, m)
	}
	return &connectError{msg: fmt.Sprintf("cannot connect as user %s to database %s: %s", ce.Config.User,
		ce.Config.Database, strings.Join(msgs, "; ")), err: err}
}

type connectError struct {
	msg string
	err error
}

func (e *connectError) Error() string { return e.msg }
func (e *connectError) Unwrap() error { return e.err }

// openPostgres connects to postgres://user@host:port/db with the password read from its
// reference. A password inside the URL is refused (driver.ErrCredentialLiteral).
func openPostgres(ctx context.Context, raw, passwordRef string, conns int, getenv func(string) string, params ...string) (*source, error) {
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return nil, newErr("config", "source", ErrConfig, errors.New("cannot parse the postgres URL (is it postgres://user@host:port/db?)"))
	}
	for i := 0; i+1 < len(params); i += 2 {
		cfg.RuntimeParams[params[i]] = params[i+1]
	}
	host := fmt.Sprintf("%s:%d/%s", cfg.Host, cfg.Port, cfg.Database)
	// Only the URL itself is checked: pgx also fills the password from PGPASSWORD and
	// ~/.pgpass, which is not a literal in the config (and is replaced by the reference below).
	if u, err := url.Parse(raw); err == nil {
		if _, set := u.User.Password(); set || u.Query().Has("password") {
			return nil, &store.Error{Op: "config", Key: "password", Kind: store.ErrCredentialLiteral, Err: fmt.Errorf("the source URL for %s holds a password: give password: env://NAME instead", host)}
		}
	}
	pw, err := store.ResolveRef("password", passwordRef, getenv)
	if err != nil {
		return nil, err
	}
	cfg.Password = pw.Reveal()
	d := pgDialect{host: host, password: pw}
	sess := &pgSession{}
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(sess.afterConnect))
	db.SetMaxOpenConns(conns + 2) // the chunks', the plan's (or the snapshot's), and one to name a bad value
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, newErr("open-source", "postgres "+host, ErrSourceUnavailable, d.scrub(oneLine(err)))
	}
	return &source{db: db, d: d, desc: "postgres " + host, pg: sess}, nil
}

// openSource opens e's source with room for conns chunks in flight. params are PostgreSQL
// settings (name, value, …) of every session, given at its start.
func openSource(ctx context.Context, e *Export, conns int, getenv func(string) string, params ...string) (*source, error) {
	switch {
	case strings.HasPrefix(e.Source, "sqlite://"):
		return openSQLite(ctx, e.Source)
	case strings.HasPrefix(e.Source, "postgres://"), strings.HasPrefix(e.Source, "postgresql://"):
		return openPostgres(ctx, e.Source, e.Password, conns, getenv, params...)
	}
	scheme, _, _ := strings.Cut(e.Source, "://")
	return nil, newErr("config", "source", ErrConfig, fmt.Errorf("source scheme %q: want sqlite:// or postgres://", scheme))
}
