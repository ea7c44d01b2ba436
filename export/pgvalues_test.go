package export

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/internal/testenv"
)

// pgFresh drops and creates the test's own table from create (with {t} for its name) and
// the inserts, and returns its name.
func pgFresh(t *testing.T, db *sql.DB, create string, inserts ...string) string {
	t.Helper()
	name := "wharf_v_" + strings.ToLower(strings.NewReplacer("/", "_", "#", "_", " ", "_", "'", "", "-", "_").Replace(t.Name()))
	pgExec(t, db, `DROP TABLE IF EXISTS `+name)
	pgExec(t, db, strings.ReplaceAll(create, "{t}", name))
	for _, q := range inserts {
		pgExec(t, db, strings.ReplaceAll(q, "{t}", name))
	}
	return name
}

func pgExport(t *testing.T, srv testenv.PostgresServer, source, table string) (Export, Options) {
	t.Helper()
	e := Export{Name: "pg", Source: source, Password: srv.PasswordRef(t), Table: table, ChunkKey: "id",
		Destination: "file://" + t.TempDir() + "/out/"}
	return e, Options{StatePath: filepath.Join(t.TempDir(), "state.db")}
}

// TestPostgresTimestampPastUnixMicros: PostgreSQL's timestamps go on to 294276; a value past
// the last microsecond since 1970 an int64 holds (294247-01-10) is refused by name, never
// wrapped around to 290279 BC. The last one before it is written.
func TestPostgresTimestampPastUnixMicros(t *testing.T) {
	srv := testenv.Postgres(t)
	db := srv.DB(t, "")
	for _, typ := range []string{"timestamp", "timestamptz"} {
		t.Run(typ, func(t *testing.T) {
			table := pgFresh(t, db, `CREATE TABLE {t} (id int, at `+typ+`)`,
				`INSERT INTO {t} VALUES (1, '294247-01-10 04:00:54.775806+00'), (2, '294276-12-31 23:59:59.999999+00')`)
			e, o := pgExport(t, srv, srv.URL, table)
			_, err := Run(context.Background(), e, o)
			var ve *ValueError
			if !errors.Is(err, ErrValueRefused) || !errors.Is(err, ErrOutOfRange) || !errors.As(err, &ve) {
				t.Fatalf("err = %v, want ErrOutOfRange", err)
			}
			if ve.Column != "at" || ve.Row != "2" || ve.Value != "294276-12-31 23:59:59.999999" || !strings.Contains(err.Error(), table) {
				t.Errorf("refusal names %+v (%v)", ve, err)
			}
			pgExec(t, db, `DELETE FROM `+table+` WHERE id = 2`)
			if res, err := Run(context.Background(), e, o); err != nil || res.Rows != 1 {
				t.Fatalf("the last microsecond timestamp: %v", err)
			}
		})
	}
}

// TestPostgresInfinityRefusedByDefault: infinity and -infinity in a date or timestamp column
// are refused by default, naming the column and the row, also when they are the chunking key;
// infinity: null and infinity: clamp export them (DuckDB's read of them is in readback).
func TestPostgresInfinityRefusedByDefault(t *testing.T) {
	srv := testenv.Postgres(t)
	db := srv.DB(t, "")
	for _, c := range []struct{ typ, value, key string }{
		{"date", "-infinity", "2"}, {"timestamp", "infinity", "2"}, {"timestamptz", "-infinity", "2"},
	} {
		t.Run(c.typ, func(t *testing.T) {
			table := pgFresh(t, db, `CREATE TABLE {t} (id int, v `+c.typ+`)`,
				`INSERT INTO {t} VALUES (1, '2024-01-01'), (2, '`+c.value+`'), (3, NULL)`)
			e, o := pgExport(t, srv, srv.URL, table)
			_, err := Run(context.Background(), e, o)
			var ve *ValueError
			if !errors.Is(err, ErrInfinite) || !errors.As(err, &ve) || ve.Column != "v" || ve.Row != c.key || ve.Value != c.value {
				t.Fatalf("err = %v (%+v), want ErrInfinite naming v, row %s, %s", err, ve, c.key, c.value)
			}
			for _, p := range []InfinityPolicy{InfinityNull, InfinityClamp} {
				e.Infinity = p
				if res, err := Run(context.Background(), e, o); err != nil || res.Rows != 3 {
					t.Errorf("infinity: %s: %v", p, err)
				}
			}
		})
	}
	t.Run("chunk key", func(t *testing.T) {
		table := pgFresh(t, db, `CREATE TABLE {t} (id timestamp, v int)`,
			`INSERT INTO {t} VALUES ('2024-01-01', 1), ('infinity', 2), ('-infinity', 3)`)
		e, o := pgExport(t, srv, srv.URL, table)
		_, err := Run(context.Background(), e, o)
		var ve *ValueError
		if !errors.Is(err, ErrInfinite) || !errors.As(err, &ve) || ve.Column != "id" || !strings.Contains(ve.Row, "infinity") {
			t.Fatalf("err = %v", err)
		}
		e.Infinity, e.ChunkRows = InfinityClamp, 1
		res, err := Run(context.Background(), e, o)
		if err != nil || res.Rows != 3 || len(res.Parts) != 3 {
			t.Fatalf("clamped: %v %+v", err, res)
		}
		if lo, hi := res.Parts[2].Range.Lo, res.Parts[2].Range.Hi; lo.String() != "infinity" || hi.String() != "infinity" {
			t.Errorf("the last chunk's range is %s..%s, want infinity..infinity", lo, hi)
		}
	})
}

// TestPostgresSQLASCIIText: a SQL_ASCII database stores any bytes as text; text that is not
// UTF-8 is refused by name (it would be a Parquet string a reader rejects), valid text is
// written as it is.
func TestPostgresSQLASCIIText(t *testing.T) {
	srv := testenv.Postgres(t)
	const dbname = "wharf_sql_ascii"
	admin := srv.DB(t, "")
	var n int
	if err := admin.QueryRow(`SELECT count(*) FROM pg_database WHERE datname = $1`, dbname).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		pgExec(t, admin, `CREATE DATABASE `+dbname+` ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`)
	}
	db := srv.DB(t, dbname)
	table := pgFresh(t, db, `CREATE TABLE {t} (id int, v text, j json)`,
		`INSERT INTO {t} VALUES (1, 'plain', '{}'), (2, E'\xde\xad\xbe\xef', '{}')`)
	e, o := pgExport(t, srv, srv.URLFor(t, dbname), table)
	_, err := Run(context.Background(), e, o)
	var ve *ValueError
	if !errors.Is(err, ErrNotUTF8) || !errors.As(err, &ve) || ve.Column != "v" || ve.Row != "2" || ve.Value != "x'deadbeef'" {
		t.Fatalf("err = %v (%+v)", err, ve)
	}
	pgExec(t, db, `UPDATE `+table+` SET v = 'fine' WHERE id = 2`)
	res, err := Run(context.Background(), e, o)
	if err != nil || res.Rows != 2 {
		t.Fatalf("valid text: %v", err)
	}
	v, err := dataset.ValidateURL(context.Background(), res.Prefix, &e.Store, true)
	if err != nil || v.Manifest.Session["server_encoding"] != "SQL_ASCII" {
		t.Errorf("the manifest's session: %v %v", err, v.Manifest.Session)
	}
}

// TestPostgresSessionPinned: the text of the types written as text does not depend on the
// settings a client, role or database brings (here a client's options asking for another
// IntervalStyle, DateStyle, TimeZone and extra_float_digits); the manifest records the pinned
// settings; money is a decimal at its currency's scale, not a locale-formatted string.
func TestPostgresSessionPinned(t *testing.T) {
	srv := testenv.Postgres(t)
	db := srv.DB(t, "")
	table := pgFresh(t, db, `CREATE TABLE {t} (id int, iv interval, tt timetz, arr timestamptz[], f float8[], m money)`,
		`INSERT INTO {t} VALUES (1, '1 year 2 mons 3 days 04:05:06.5', '10:00:00+02', ARRAY['2024-01-02 03:04:05+00'::timestamptz],
  ARRAY[0.1::float8], 1234.56)`)
	want := []string{"P1Y2M3DT4H5M6.5S", "10:00:00+02", `{"2024-01-02 03:04:05+00"}`, "{0.1}", "1234.56"}
	q := url.Values{"options": {"-c IntervalStyle=sql_standard -c DateStyle=German -c TimeZone=Asia/Tokyo -c extra_float_digits=-3"}}
	for _, source := range []string{srv.URL, srv.URL + "?" + strings.ReplaceAll(q.Encode(), "+", "%20")} {
		e, o := pgExport(t, srv, source, table)
		res, err := Run(context.Background(), e, o)
		if err != nil {
			t.Fatal(err)
		}
		rec := readParquet(t, filepath.Join(strings.TrimPrefix(res.Prefix, "file://"), res.Parts[0].Key))
		for i, w := range want {
			if got := rec.Column(i + 1).ValueStr(0); got != w {
				t.Errorf("%s: column %s reads %q, want %q", source, rec.ColumnName(i+1), got, w)
			}
		}
		if typ := rec.Schema().Field(5).Type.String(); typ != "decimal(19, 2)" {
			t.Errorf("money is %s, want decimal(19, 2)", typ)
		}
		rec.Release()
		v, err := dataset.ValidateURL(context.Background(), res.Prefix, &e.Store, false)
		if err != nil {
			t.Fatal(err)
		}
		s := v.Manifest.Session
		if s["IntervalStyle"] != "iso_8601" || s["DateStyle"] != "ISO, YMD" || s["TimeZone"] != "UTC" ||
			s["extra_float_digits"] != "3" || s["client_encoding"] != "UTF8" || s["lc_monetary"] == "" {
			t.Errorf("%s: the manifest records the session %v", source, s)
		}
	}
}

// TestPostgresManifestTypeNames: the manifest's db_type is the SQL type with its modifiers
// (format_type), not an OID or a bare NUMERIC: money, timetz, an enum, a composite, a domain,
// numeric(38,10), varchar(10), timestamp(3), arrays.
func TestPostgresManifestTypeNames(t *testing.T) {
	srv := testenv.Postgres(t)
	db := srv.DB(t, "")
	pgExec(t, db, `DO $$ BEGIN
  CREATE TYPE wharf_mood AS ENUM ('sad', 'ok');
  EXCEPTION WHEN duplicate_object THEN NULL; END $$`)
	pgExec(t, db, `DO $$ BEGIN
  CREATE TYPE wharf_pair AS (a int, b text);
  EXCEPTION WHEN duplicate_object THEN NULL; END $$`)
	pgExec(t, db, `DO $$ BEGIN
  CREATE DOMAIN wharf_amount AS numeric(10,2);
  EXCEPTION WHEN duplicate_object THEN NULL; END $$`)
	table := pgFresh(t, db, `CREATE TABLE {t} (id int, m money, tt timetz, mood wharf_mood, p wharf_pair, a wharf_amount,
  n numeric(38,10), wide numeric(50,2), bare numeric, v varchar(10), ts3 timestamp(3), arr int[])`,
		`INSERT INTO {t} VALUES (1, 1.5, '10:00+02', 'ok', ROW(1, 'x'), 1.5, 1.5, 1.5, 1.5, 'x', '2024-01-01', '{1}')`)
	e, o := pgExport(t, srv, srv.URL, table)
	res, err := Run(context.Background(), e, o)
	if err != nil {
		t.Fatal(err)
	}
	v, err := dataset.ValidateURL(context.Background(), res.Prefix, &e.Store, true)
	if err != nil || !v.Certified {
		t.Fatalf("validate: %v %+v", err, v)
	}
	want := map[string][2]string{
		"id": {"integer", "int32"}, "m": {"money", "decimal(19, 2)"}, "tt": {"time with time zone", "utf8"},
		"mood": {"wharf_mood", "utf8"}, "p": {"wharf_pair", "utf8"}, "a": {"wharf_amount", "decimal(10, 2)"},
		"n": {"numeric(38,10)", "decimal(38, 10)"}, "wide": {"numeric(50,2)", "utf8"}, "bare": {"numeric", "utf8"},
		"v": {"character varying(10)", "utf8"}, "ts3": {"timestamp(3) without time zone", "timestamp[us]"},
		"arr": {"integer[]", "utf8"},
	}
	for _, c := range v.Manifest.Schema {
		if w := want[c.Name]; c.Source != w[0] || c.Type != w[1] {
			t.Errorf("column %s: db_type %q type %s, want %q %s", c.Name, c.Source, c.Type, w[0], w[1])
		}
	}
}
