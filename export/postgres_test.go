package export

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store/driver"
)

// pgTable creates a fresh table covering the PostgreSQL types wharf maps, and returns its name.
func pgTable(t *testing.T, srv testenv.PostgresServer) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Password = srv.Password
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	name := "wharf_t_" + strings.ToLower(strings.NewReplacer("/", "_", "#", "_").Replace(t.Name()))
	pgExec(t, db, `DROP TABLE IF EXISTS `+name)
	pgExec(t, db, `CREATE TABLE `+name+` (id bigint, small smallint, i int, f4 real, f8 double precision,
  amount numeric(12,3), big numeric, name text, v varchar(10), raw bytea, ok boolean, d date,
  ts timestamp, tz timestamptz, u uuid, j json, jb jsonb)`)
	pgExec(t, db, `INSERT INTO `+name+` SELECT g, g % 100, g * 2, g / 3.0, g / 7.0, g * 1.125, g::numeric * 1e30,
  'row ' || g, 'v' || (g % 10), decode(lpad(to_hex(g), 8, '0'), 'hex'), g % 2 = 0, date '2024-01-01' + g,
  timestamp '2024-01-01 00:00:00' + g * interval '1 minute', timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second',
  md5(g::text)::uuid, json_build_object('g', g), jsonb_build_object('g', g)
  FROM generate_series(1, 250) g`)
	pgExec(t, db, `INSERT INTO `+name+` (id) VALUES (251), (NULL)`) // NULLs everywhere, and a NULL key
	return name
}

func pgExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func TestPostgresExport(t *testing.T) {
	srv := testenv.Postgres(t)
	table := pgTable(t, srv)
	dir := t.TempDir()
	e := Export{Name: "pg", Source: srv.URL, Password: srv.PasswordRef(t), Table: table, ChunkKey: "id",
		ChunkRows: 100, Destination: "file://" + dir + "/{table}/"}
	o := Options{StatePath: filepath.Join(t.TempDir(), "state.db"), Parallel: 2}
	res, err := Run(context.Background(), e, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 252 || len(res.Parts) != 4 { // 3 key ranges and the NULL-key chunk
		t.Fatalf("rows %d parts %d", res.Rows, len(res.Parts))
	}
	v, err := dataset.ValidateURL(context.Background(), res.Prefix, &e.Store, true)
	if err != nil || !v.Certified {
		t.Fatalf("validate: %v %+v", err, v)
	}
	want := map[string]string{"small": "int16", "i": "int32", "f4": "float32", "amount": "decimal(12, 3)", "big": "utf8",
		"raw": "binary", "ok": "bool", "d": "date32", "ts": "timestamp[us]", "tz": "timestamp[us, tz=UTC]",
		"u": "extension<arrow.uuid>", "j": "extension<arrow.json[storage_type=utf8]>"}
	for _, c := range v.Manifest.Schema {
		if w, ok := want[c.Name]; ok && c.Type != w {
			t.Errorf("column %s: %s, want %s", c.Name, c.Type, w)
		}
	}
}

func TestPostgresErrorsNameHostNotPassword(t *testing.T) {
	srv := testenv.Postgres(t)
	pwFile := filepath.Join(t.TempDir(), "pw")
	const planted = "planted-Secret-4711"
	must(t, os.WriteFile(pwFile, []byte(planted), 0o600))
	dir := t.TempDir()
	e := Export{Name: "pg", Source: srv.URL, Password: "file://" + pwFile, Table: "t", ChunkKey: "id",
		Destination: "file://" + dir}
	state := filepath.Join(t.TempDir(), "state.db")
	_, err := Run(context.Background(), e, Options{StatePath: state})
	if srv.Password == "" {
		t.Skip("server uses trust authentication: a wrong password is not refused")
	}
	if !errors.Is(err, ErrSourceUnavailable) || strings.Contains(err.Error(), planted) || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("err = %v", err)
	}
	for path, content := range snapshot(t, dir) {
		if strings.Contains(content, planted) {
			t.Fatalf("%s holds the password", path)
		}
	}
	j, _ := OpenJournal(context.Background(), state)
	defer j.Close()
	runs, _ := j.Runs(context.Background(), "", 0)
	if len(runs) != 1 || runs[0].Status != StatusFailed || strings.Contains(runs[0].Error, planted) {
		t.Fatalf("journal: %+v", runs)
	}
}

// TestPostgresPasswordIsTheReference: PGPASSWORD in the environment (docs/export.md's own
// example, password: env://PGPASSWORD) is neither refused as a literal nor used instead of the
// reference; a password inside the URL is refused.
func TestPostgresPasswordIsTheReference(t *testing.T) {
	srv := testenv.Postgres(t)
	if srv.Password == "" {
		t.Skip("server uses trust authentication")
	}
	table := pgTable(t, srv)
	t.Setenv("PGPASSWORD", "not-the-password")
	e := Export{Name: "pg", Source: srv.URL, Password: srv.PasswordRef(t), Table: table, ChunkKey: "id",
		Destination: "file://" + t.TempDir() + "/"}
	o := Options{StatePath: filepath.Join(t.TempDir(), "state.db")}
	if res, err := Run(context.Background(), e, o); err != nil || res.Rows != 252 {
		t.Fatalf("with PGPASSWORD set: %v", err)
	}
	for _, src := range []string{strings.Replace(srv.URL, "@", ":pw@", 1), srv.URL + "?password=pw"} {
		e.Source = src
		if _, err := Run(context.Background(), e, o); !errors.Is(err, driver.ErrCredentialLiteral) {
			t.Errorf("%s: err = %v, want ErrCredentialLiteral", src, err)
		}
	}
}
