package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// exitOf is the exit status err gives.
func exitOf(err error) int { return exitCode(context.Background(), err) }

// newTestApp is an app as a command line would set it up, reading env and, when given, the
// config file at path.
func newTestApp(env map[string]string, path string) *app {
	return &app{getenv: envOf(env), format: "pretty", configPath: path, log: slog.New(slog.DiscardHandler)}
}

// writeConfig writes body as wharf.yaml in a temp dir and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "wharf.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// loadYAML writes body as wharf.yaml and loads it as the export commands do.
func loadYAML(t *testing.T, body string, env map[string]string) (*config, string, error) {
	t.Helper()
	p := writeConfig(t, body)
	c, err := newTestApp(env, p).exportsConfig()
	return c, filepath.Dir(p), err
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
	if want := filepath.Join(dir, ".wharf", "state.db"); c.file.State != want {
		t.Errorf("state = %q, want %q", c.file.State, want)
	}
	e := c.file.Exports[0]
	if want := "sqlite://" + filepath.Join(dir, "src.db"); e.Source != want {
		t.Errorf("source = %q, want %q", e.Source, want)
	}
	if want := filepath.Join(dir, "out", "{export}", "{date}") + "/"; e.Destination != want {
		t.Errorf("destination = %q, want %q", e.Destination, want)
	}
	if e.ChunkRows == 0 || e.Format != "parquet" || e.Mode != "full" {
		t.Errorf("defaults not filled: %+v", e)
	}
}

func TestConfigUnknownKeyNamesKeyAndLine(t *testing.T) {
	for _, tc := range []struct{ name, body, key, line, where string }{
		{"top", "state: s.db\ncolour: blue\n" + minimalExport, `"colour"`, ":2:", "the top level"},
		{"export", minimalExport + "    chunk_size: 10\n", `"chunk_size"`, ":7:", "exports[0]"},
		{"store", minimalExport + "    store:\n      endpont: https://x\n", `"endpont"`, ":8:", "exports[0].store"},
		{"ship", minimalExport + "ship:\n  spol: ./x\n", `"spol"`, ":8:", "ship"},
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
			if exitOf(err) != exitUsage {
				t.Errorf("code %s exits %d, want 2", errCode(err), exitOf(err))
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
	e := c.file.Exports[0]
	if e.Source != "postgres://app@db.internal:5432/shop" || e.ChunkRows != 1234 ||
		e.Destination != "s3://lake/{export}/" || e.Password != "env://PGPASSWORD" {
		t.Errorf("interpolated to %+v", e)
	}
}

func TestConfigInterpolationErrors(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"unset", strings.Replace(minimalExport, "table: orders", "table: ${env:NOPE}", 1), "NOPE is not set"},
		{"file", strings.Replace(minimalExport, "table: orders", "table: ${file:missing.txt}", 1), "missing.txt"},
		{"kind", strings.Replace(minimalExport, "table: orders", "table: ${vault:x}", 1), `unknown kind "vault"`},
		{"credential", minimalExport + "    password: ${env:PGPASSWORD}\n", "password: a credential"},
		{"store credential", strings.Replace(minimalExport, "./out/", "s3://lake/", 1) + "    store:\n      secret_access_key: ${env:PGPASSWORD}\n", "secret_access_key: a credential"},
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
	for _, tc := range []struct {
		name, body, want string
		code             *errcode.Code
	}{
		{"empty", "", "empty", store.ErrConfig},
		{"no exports", "state: x.db\n", "no exports", store.ErrConfig},
		{"duplicate", minimalExport + strings.TrimPrefix(minimalExport, "exports:\n"), "second export", store.ErrConfig},
		{"no chunk key", strings.Replace(minimalExport, "    chunk_key: id\n", "", 1), "chunk_key", store.ErrConfig},
		{"literal secret", strings.Replace(minimalExport, "./out/", "s3://lake/", 1) + "    store:\n      access_key_id: env://A\n      secret_access_key: abc\n", "literal", driver.ErrCredentialLiteral},
		{"wrong type", minimalExport + "    chunk_rows: many\n", ":7:", store.ErrConfig},
		{"exports not a list", "exports: {}\n", "want a list", store.ErrConfig},
		{"zero chunk rows", minimalExport + "    chunk_rows: 0\n", "chunk_rows: 0: want at least 1", store.ErrConfig},
		{"negative chunk rows", minimalExport + "    chunk_rows: -5\n", "chunk_rows", store.ErrConfig},
		{"an unknown infinity policy", minimalExport + "    infinity: maybe\n", "infinity", store.ErrConfig},
		{"an unknown time unit", minimalExport + "    time_units: {at: fortnights}\n", "time_units.at", store.ErrConfig},
		{"an unknown UTF-8 policy", minimalExport + "    invalid_utf8: replace\n", "invalid_utf8", store.ErrConfig},
		{"an unknown retention", minimalExport + "    superseded: delete\n", "superseded", store.ErrConfig},
		{"an unclosed quote", strings.Replace(minimalExport, "table: orders", `table: '"orders'`, 1), "not closed", store.ErrConfig},
		{"backend option of another store", minimalExport + "    store:\n      sas_token: env://X\n", "sas_token", store.ErrConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := loadYAML(t, tc.body, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if errcode.Of(err) != tc.code || exitOf(err) != exitUsage {
				t.Errorf("code %s (exit %d), want %s (exit 2)", errCode(err), exitOf(err), tc.code.Name())
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
	e := c.file.Exports[0]
	if e.InvalidUTF8 != export.UTF8Binary || e.Infinity != export.InfinityClamp || e.Superseded != export.SupersededMove ||
		e.TimeUnits["created"] != export.UnitMillis || e.TimeUnits["day"] != export.UnitDays {
		t.Errorf("loaded %+v", e)
	}
}

func TestConfigMissingFile(t *testing.T) {
	_, err := newTestApp(nil, filepath.Join(t.TempDir(), "nope.yaml")).exportsConfig()
	if !errors.Is(err, store.ErrConfig) || !strings.Contains(err.Error(), "nope.yaml") || exitOf(err) != exitUsage {
		t.Fatalf("missing config: %v", err)
	}
}

// One wharf.yaml holds every section: the export commands read theirs and leave the rest.
func TestConfigAcceptsEverySection(t *testing.T) {
	body := minimalExport + "ship:\n  spool: ./spool\n  to: s3://lake/raw\nstores:\n  lake:\n    backend: s3\n    endpoint: https://lake.example\nendpoint_allowlist: [lake.example]\n"
	c, _, err := loadYAML(t, body, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.file.Exports) != 1 || c.file.Ship == nil || c.file.Ship.UploadConcurrency != 2 || c.file.Stores["lake"] == nil {
		t.Errorf("sections: %+v", c.file)
	}
}

// TestStoreOptionsPrecedence: for the object tools, a flag beats the config file's stores
// entry, which beats the environment (AWS_ENDPOINT_URL), which beats the default.
func TestStoreOptionsPrecedence(t *testing.T) {
	env := map[string]string{"AWS_ENDPOINT_URL": "https://env.example", envAllowlist: "nothing.example"}
	withStores := writeConfig(t, "stores:\n  s3:\n    endpoint: https://file.example\n")
	for _, tc := range []struct {
		name, config, flag, want string
	}{
		{"environment", "", "", "env.example"},
		{"file over environment", withStores, "", "file.example"},
		{"flag over file", withStores, "https://flag.example", "flag.example"},
	} {
		a := newTestApp(env, tc.config)
		a.endpoint = tc.flag
		err := store.Check("s3://b/k", a.storeConfig(nil))
		if !errors.Is(err, driver.ErrEndpointNotAllowed) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s refused by the allow-list", tc.name, err, tc.want)
		}
	}
}

func TestStoreConfigEndpointChecks(t *testing.T) {
	tests := []struct {
		env  map[string]string
		flag string
		want error
	}{
		{map[string]string{"AWS_ENDPOINT_URL": "http://minio.internal:9000"}, "", driver.ErrEndpointInsecure},
		{nil, "http://10.1.2.3:9000", driver.ErrEndpointInsecure},
		{map[string]string{"WHARF_ENDPOINT_ALLOWLIST": "s3.example.com, *.corp.example"}, "https://evil.example", driver.ErrEndpointNotAllowed},
		{map[string]string{"WHARF_ENDPOINT_ALLOWLIST": "s3.example.com, *.corp.example"}, "https://minio.corp.example", nil},
		{nil, "http://127.0.0.1:9000", nil},
		{nil, "http://u:pw@127.0.0.1:9000", driver.ErrCredentialLiteral},
		{map[string]string{"AWS_ENDPOINT_URL_S3": "https://u:pw@s3.example"}, "", driver.ErrCredentialLiteral},
	}
	for _, tt := range tests {
		a := newTestApp(tt.env, "")
		a.endpoint = tt.flag
		err := store.Check("s3://b/k", a.storeConfig(nil))
		if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
			t.Errorf("env %v flag %q: Check = %v, want %v", tt.env, tt.flag, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// Every command that takes a store URL reads the config file's named stores: probe and mb too.
func TestNamedStoreServesEveryCommand(t *testing.T) {
	cfg := writeConfig(t, "stores:\n  lake:\n    backend: s3\n    endpoint: https://lake.example\n")
	a := newTestApp(map[string]string{envAllowlist: "nothing.example"}, cfg)
	a.out = io.Discard
	for name, open := range map[string]func() error{
		"probe": func() error { return a.probe(t.Context(), "lake://b/") },
		"mb":    func() error { return a.mb(t.Context(), "lake://b") },
	} {
		err := open()
		if !errors.Is(err, driver.ErrEndpointNotAllowed) || !strings.Contains(err.Error(), "lake.example") {
			t.Errorf("%s lake://b: %v, want the named store's endpoint, refused by the allow-list", name, err)
		}
	}
}
