package export

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
)

func TestTableName(t *testing.T) {
	for in, want := range map[string][]string{
		"orders":                       {"orders"},
		"public.orders":                {"public", "orders"},
		`"weird.name"`:                 {"weird.name"},
		`"Other Schema"."weird.name"`:  {"Other Schema", "weird.name"},
		`public."Mixed Case"`:          {"public", "Mixed Case"},
		`"say ""hi"""`:                 {`say "hi"`},
		`"a.b".c`:                      {"a.b", "c"},
		`Orders`:                       {"Orders"},
		`"Other Schema"."weird.name."`: {"Other Schema", "weird.name."},
	} {
		got, err := tableName(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", ".", "a.", ".a", "a..b", `"open`, `"a"b`, `a"b"`, "a.b.c", `"a".`, `""`} {
		if got, err := tableName(bad); err == nil {
			t.Errorf("%s: %q, want an error", bad, got)
		}
	}
	e := Export{Name: "x", Source: "sqlite:///x.db", Table: `"open`, ChunkKey: "id", Destination: "file:///tmp/x/"}
	if err := e.Check(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "table") {
		t.Errorf("Check: %v", err)
	}
}

// TestTableWithADot: a table whose name holds a dot is given as quoted identifiers, in SQLite
// and in a PostgreSQL schema whose name holds a space; {table} is the names joined by a dot.
func TestTableWithADot(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "src.db")
	db := openDB(t, path)
	exec(t, db, `CREATE TABLE "weird.name" (id INTEGER PRIMARY KEY, v TEXT)`)
	exec(t, db, `INSERT INTO "weird.name" VALUES (1, 'a'), (2, 'b')`)
	for _, table := range []string{`"weird.name"`, `main."weird.name"`} {
		e := Export{Name: "w", Source: "sqlite://" + path, Table: table, ChunkKey: "id",
			Destination: "file://" + t.TempDir() + "/{table}/"}
		res, err := Run(ctx, e, Options{StatePath: filepath.Join(t.TempDir(), "state.db")})
		if err != nil || res.Rows != 2 || !strings.HasSuffix(res.Prefix, "weird.name/") {
			t.Errorf("%s: %v %+v", table, err, res)
		}
	}
	t.Run("postgres", func(t *testing.T) {
		srv := testenv.Postgres(t)
		pg := srv.DB(t, "")
		pgExec(t, pg, `CREATE SCHEMA IF NOT EXISTS "Other Schema"`)
		pgExec(t, pg, `DROP TABLE IF EXISTS "Other Schema"."weird.name"`)
		pgExec(t, pg, `CREATE TABLE "Other Schema"."weird.name" (id int, v text)`)
		pgExec(t, pg, `INSERT INTO "Other Schema"."weird.name" VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
		e, o := pgExport(t, srv, srv.URL, `"Other Schema"."weird.name"`)
		e.Destination = "file://" + t.TempDir() + "/{table}/"
		res, err := Run(ctx, e, o)
		if err != nil || res.Rows != 3 || !strings.HasSuffix(res.Prefix, "/Other Schema.weird.name/") {
			t.Fatalf("%v %+v", err, res)
		}
	})
}
