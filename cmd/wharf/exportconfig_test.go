package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/store"
)

// loadYAML writes body as wharf.yaml in a temp dir and loads it with env.
func loadYAML(t *testing.T, body string, env map[string]string) (*exportConfig, string, error) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "wharf.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &app{getenv: envOf(env), format: "pretty"}
	c, err := a.loadConfig(p)
	return c, dir, err
}

const minimalExport = `exports:
  - name: orders
    source: sqlite://./src.db
    table: orders
    chunk_key: id
    destination: ./out/{export}/{date}/
`

func TestConfigResolvesRelativePaths(t *testing.T) {
	c, dir, err := loadYAML(t, minimalExport, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, ".wharf", "state.db"); c.state != want {
		t.Errorf("state = %q, want %q", c.state, want)
	}
	e := c.exports[0]
	if want := "sqlite://" + filepath.Join(dir, "src.db"); e.Source != want {
		t.Errorf("source = %q, want %q", e.Source, want)
	}
	if want := filepath.Join(dir, "out", "{export}", "{date}") + "/"; e.Destination != want {
		t.Errorf("destination = %q, want %q", e.Destination, want)
	}
	if e.ChunkRows == 0 || e.Format != "parquet" || e.Mode != "full" {
		t.Errorf("defaults not filled: %+v", e.Export)
	}
}

func TestConfigUnknownKeyNamesKeyAndLine(t *testing.T) {
	for _, tc := range []struct{ name, body, key, line, where string }{
		{"top", "state: s.db\ncolour: blue\n" + minimalExport, `"colour"`, ":2:", "the top level"},
		{"export", minimalExport + "    chunk_size: 10\n", `"chunk_size"`, ":7:", "exports[0]"},
		{"store", minimalExport + "    store:\n      endpont: https://x\n", `"endpont"`, ":8:", "exports[0].store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := loadYAML(t, tc.body, nil)
			if err == nil {
				t.Fatal("loaded a config with an unknown key")
			}
			msg := err.Error()
			for _, want := range []string{tc.key, tc.line, tc.where, "wharf.yaml"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not name %s", msg, want)
				}
			}
			if codeExit(errCode(err)) != exitUsage {
				t.Errorf("code %s exits %d, want 2", errCode(err), codeExit(errCode(err)))
			}
		})
	}
}

func TestConfigInterpolation(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bucket.txt"), []byte("lake\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	body := `exports:
  - name: orders
    source: postgres://app@${env:PGHOST}:5432/shop
    password: env://PGPASSWORD
    table: orders
    chunk_key: id
    chunk_rows: ${env:ROWS}
    destination: s3://${file:` + filepath.Join(dir, "bucket.txt") + `}/{export}/
`
	c, _, err := loadYAML(t, body, map[string]string{"PGHOST": "db.internal", "ROWS": "1234"})
	if err != nil {
		t.Fatal(err)
	}
	e := c.exports[0]
	if e.Source != "postgres://app@db.internal:5432/shop" || e.ChunkRows != 1234 ||
		e.Destination != "s3://lake/{export}/" || e.Password != "env://PGPASSWORD" {
		t.Errorf("interpolated to %+v", e.Export)
	}
}

func TestConfigInterpolationErrors(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"unset", strings.Replace(minimalExport, "table: orders", "table: ${env:NOPE}", 1), "NOPE is not set"},
		{"file", strings.Replace(minimalExport, "table: orders", "table: ${file:missing.txt}", 1), "missing.txt"},
		{"kind", strings.Replace(minimalExport, "table: orders", "table: ${vault:x}", 1), `unknown kind "vault"`},
		{"credential", minimalExport + "    password: ${env:PGPASSWORD}\n", "password is a credential"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := loadYAML(t, tc.body, map[string]string{"PGPASSWORD": "hunter2"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error leaks a secret: %v", err)
			}
		})
	}
}

func TestConfigRefusesBadExports(t *testing.T) {
	for _, tc := range []struct{ name, body, want, code string }{
		{"empty", "", "empty", store.ErrConfig.Code()},
		{"no exports", "state: x.db\n", "no exports", store.ErrConfig.Code()},
		{"duplicate", minimalExport + strings.TrimPrefix(minimalExport, "exports:\n"), "second export", store.ErrConfig.Code()},
		{"no chunk key", strings.Replace(minimalExport, "    chunk_key: id\n", "", 1), "chunk_key", store.ErrConfig.Code()},
		{"literal secret", minimalExport + "    store:\n      secret_access_key: abc\n", "literal", store.ErrCredentialLiteral.Code()},
		{"wrong type", minimalExport + "    chunk_rows: many\n", "line 7", store.ErrConfig.Code()},
		{"zero chunk rows", minimalExport + "    chunk_rows: 0\n", "chunk_rows: 0", store.ErrConfig.Code()},
		{"negative chunk rows", minimalExport + "    chunk_rows: -5\n", "chunk_rows", store.ErrConfig.Code()},
		{"an unknown infinity policy", minimalExport + "    infinity: maybe\n", "infinity", store.ErrConfig.Code()},
		{"an unknown time unit", minimalExport + "    time_units: {at: fortnights}\n", "time_units.at", store.ErrConfig.Code()},
		{"an unknown UTF-8 policy", minimalExport + "    invalid_utf8: replace\n", "invalid_utf8", store.ErrConfig.Code()},
		{"an unknown retention", minimalExport + "    superseded: delete\n", "superseded", store.ErrConfig.Code()},
		{"an unclosed quote", strings.Replace(minimalExport, "table: orders", `table: '"orders'`, 1), "not closed", store.ErrConfig.Code()},
		{"exports not a list", "exports: {}\n", "want a list", store.ErrConfig.Code()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := loadYAML(t, tc.body, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if got := errCode(err); got != tc.code || codeExit(got) != exitUsage {
				t.Errorf("code %s (exit %d), want %s (exit 2)", got, codeExit(got), tc.code)
			}
		})
	}
}

// The value options reach the export as written.
func TestConfigValueOptions(t *testing.T) {
	c, _, err := loadYAML(t, minimalExport+`    invalid_utf8: binary
    infinity: clamp
    superseded: move
    time_units:
      created: unix_millis
      day: unix_days
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := c.exports[0]
	if e.InvalidUTF8 != export.UTF8Binary || e.Infinity != export.InfinityClamp || e.Superseded != export.SupersededMove ||
		e.TimeUnits["created"] != export.UnitMillis || e.TimeUnits["day"] != export.UnitDays {
		t.Errorf("loaded %+v", e.Export)
	}
}

func TestConfigMissingFile(t *testing.T) {
	a := &app{getenv: envOf(nil)}
	_, err := a.loadConfig(filepath.Join(t.TempDir(), "nope.yaml"))
	var ce *configError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "nope.yaml") || codeExit(errCode(err)) != exitUsage {
		t.Fatalf("missing config: %v", err)
	}
}

func TestPausesParse(t *testing.T) {
	if testPauses("") != nil || testPauses("bogus:1s") != nil {
		t.Error("an empty or unknown pause spec wraps the store")
	}
	w := testPauses("after-manifest:200ms, part-upload:5ms")
	if w == nil {
		t.Fatal("no wrapper")
	}
	p := w(nil).(*pausingStore)
	if p.afterManifest.Milliseconds() != 200 || p.upload.Milliseconds() != 5 || p.afterPart != 0 {
		t.Errorf("parsed %+v", p)
	}
}

// One wharf.yaml can hold the exports and the ship service's section: export leaves the
// ship section to `wharf ship`.
func TestConfigAcceptsShipSection(t *testing.T) {
	c, _, err := loadYAML(t, minimalExport+"ship:\n  spool: ./spool\n  to: s3://lake/raw\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.exports) != 1 {
		t.Errorf("exports = %d, want 1", len(c.exports))
	}
}
