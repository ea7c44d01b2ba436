package main

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/wharfdata/wharf/internal/yamlconf/yamlflag"
	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

// loadShip builds the ship config from a config file body (written to a temp dir, "" for
// none) and flags, as `wharf ship` does.
func loadShip(t *testing.T, body string, env map[string]string, flags ...string) (ship.Config, string, error) {
	t.Helper()
	dir := t.TempDir()
	a := newTestApp(env, "")
	fs := pflag.NewFlagSet("ship", pflag.ContinueOnError)
	yamlflag.Add(fs, ship.DefaultConfig())
	if body != "" {
		path := filepath.Join(dir, "wharf.yaml")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		a.configPath = path
	}
	if err := fs.Parse(flags); err != nil {
		t.Fatal(err)
	}
	cfg, err := a.shipConfig(fs)
	return cfg, dir, err
}

func TestShipConfigFile(t *testing.T) {
	cfg, dir, err := loadShip(t, `
exports: []
ship:
  spool: ./spool
  to: ./bucket
  pipeline: edge
  node: ${env:NODE}
  upload_concurrency: 4
  multipart_threshold: 16MiB
  part_size: 5 MiB
  conditional_put: create
  retry: {initial: 2s, max: 30s, jitter: false}
  local_retention: {mode: keep_for, keep_for: 1h}
  grace: 0s
  poll_interval: 250ms
  listen: 127.0.0.1:9999
`, map[string]string{"NODE": "gw-9"}, "--upload-concurrency", "8")
	if err != nil {
		t.Fatal(err)
	}
	want := ship.DefaultConfig()
	want.Spool, want.To, want.Pipeline, want.Node = filepath.Join(dir, "spool"), filepath.Join(dir, "bucket"), "edge", "gw-9"
	want.UploadConcurrency, want.MultipartThreshold, want.PartSize = 8, 16<<20, 5<<20
	want.ConditionalPut = ship.PutCreate
	want.Retry = ship.Retry{Initial: 2 * time.Second, Max: 30 * time.Second}
	want.Retention = ship.Retention{Mode: ship.KeepFor, KeepFor: time.Hour}
	want.Grace, want.PollInterval, want.Listen = 0, 250*time.Millisecond, "127.0.0.1:9999"
	got := cfg
	if !equalConfig(got, want) {
		t.Errorf("config\n got %+v\nwant %+v", got, want)
	}
}

func equalConfig(a, b ship.Config) bool {
	a.Store, b.Store = store.Config{}, store.Config{}
	return reflect.DeepEqual(a, b)
}

func TestShipConfigFlagsOnly(t *testing.T) {
	cfg, _, err := loadShip(t, "", map[string]string{ship.EnvNodeID: "from-env"},
		"--spool", "sp", "--to", "s3://b/p", "--pipeline", "edge", "--part-size", "16MiB", "--retention", "keep",
		"--conditional-put", "overwrite", "--drain", "--listen", "off")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("sp")
	if cfg.Spool != abs || cfg.Node != "from-env" || cfg.PartSize != 16<<20 || cfg.Retention.Mode != ship.Keep ||
		cfg.ConditionalPut != ship.PutOverwrite || !cfg.Drain || cfg.Listen != ship.ListenOff {
		t.Errorf("config from flags: %+v", cfg)
	}
}

func TestShipConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		flags      []string
		want       string
	}{
		{"unknown key", "ship:\n  spool: s\n  uplod_concurrency: 3\n", nil, `wharf.yaml:3: ship: unknown key "uplod_concurrency"`},
		{"unknown nested key", "ship:\n  retry: {initial: 1s, maximum: 2s}\n", nil, `ship.retry: unknown key "maximum"`},
		{"unknown top key", "shipping: {}\n", nil, `wharf.yaml:1: the top level: unknown key "shipping"`},
		{"no section", "exports: []\n", nil, "no ship: section"},
		{"bad size", "ship:\n  part_size: lots\n", nil, `size "lots"`},
		{"part size too small", "ship:\n  spool: s\n  to: ./b\n  pipeline: p\n  node: n\n  part_size: 1MiB\n", nil, "part_size 1MiB: want 5MiB to 5GiB"},
		{"missing keys", "ship:\n  spool: s\n", nil, "to: required"},
		{"bad pipeline", "", []string{"--spool", "s", "--to", "./b", "--pipeline", "a/b", "--node", "n"}, `pipeline "a/b"`},
		{"no node", "", []string{"--spool", "s", "--to", "./b", "--pipeline", "p"}, `node ""`},
		{"public listen", "", []string{"--spool", "s", "--to", "./b", "--pipeline", "p", "--node", "n", "--listen", "0.0.0.0:1"}, "not a loopback address"},
		{"credential literal", "ship:\n  spool: s\n  to: s3://b/p\n  pipeline: p\n  node: n\n  store: {access_key_id: AKIAXXXXXXXX, secret_access_key: hunter2}\n", nil, "WHARF_CREDENTIAL_LITERAL"},
		{"credential interpolated", "ship:\n  to: s3://b/p\n  store: {secret_access_key: '${env:SECRET}'}\n", nil, "a credential"},
		{"store option of another backend", "ship:\n  spool: s\n  to: ./b\n  pipeline: p\n  node: n\n  store: {region: x}\n", nil, `unknown key "region"`},
		{"bad size flag", "", []string{"--part-size", "huge"}, `--part-size`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := loadShip(t, tc.body, map[string]string{"SECRET": "hunter2"}, tc.flags...)
			msg := ""
			if err != nil {
				msg = err.Error() + " [" + errCode(err) + "]"
			}
			if err == nil || !strings.Contains(msg, tc.want) {
				t.Errorf("got %v; want an error saying %q", msg, tc.want)
			}
			if code := exitCode(t.Context(), err); err != nil && code != exitUsage {
				t.Errorf("exit %d for a config error, want 2", code)
			}
			if strings.Contains(msg, "hunter2") || strings.Contains(msg, "AKIAXXXXXXXX") {
				t.Errorf("the error shows a credential: %s", msg)
			}
		})
	}
}

// TestShipRunOnMem runs `wharf ship` in this process: a spool to an in-memory store, drained.
func TestShipRunOnMem(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	info, err := spool.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "a.csv")
	writeFiles(t, filepath.Dir(src), map[string]string{"a.csv": "id\n1\n"})
	f, err := spool.Add(t.Context(), dir, src, spool.AddOptions{Dataset: "orders", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Clock: spool.ClockSynced})
	if err != nil {
		t.Fatal(err)
	}
	m := memURL(t)
	r := wharfRun(t, "", "ship", "--spool", dir, "--to", m+"/raw", "--pipeline", "edge", "--node", "n1", "--drain",
		"--listen", "off", "--log-level", "error").must(t, 0)
	if !strings.Contains(r.out, "ship: stopped") || !strings.Contains(r.out, "1 file(s) uploaded") {
		t.Errorf("ship said %q", r.out)
	}
	key := ship.ObjectKey("edge", "n1", info.Epoch, f)
	if got := wharfRun(t, "", "cat", m+"/raw/"+key).must(t, 0).out; got != "id\n1\n" {
		t.Errorf("the object holds %q", got)
	}
	r = wharfRun(t, "", "stat", "--format", "json", m+"/raw/"+key).must(t, 0)
	for _, want := range []string{`"wharf-dataset":"orders"`, `"wharf-node":"n1"`, `"wharf-range":"1-1"`, `"wharf-sha256":"` + f.SHA256} {
		if !strings.Contains(r.out, want) {
			t.Errorf("stat lacks %s: %s", want, r.out)
		}
	}
	r = wharfRun(t, "", "ship", "--spool", t.TempDir(), "--to", m, "--pipeline", "edge", "--node", "n1", "--listen", "off").must(t, 1)
	if !strings.Contains(r.err, "[WHARF_SPOOL_INVALID]") || !strings.Contains(r.err, "wharf spool init") {
		t.Errorf("a directory that is not a spool: %q", r.err)
	}
}

// TestShipStoreSection: the ship: section's store: options reach the destination's backend
// (here an endpoint the allow-list refuses, naming it).
func TestShipStoreSection(t *testing.T) {
	_, _, err := loadShip(t, "ship:\n  spool: s\n  to: s3://lake/raw\n  pipeline: p\n  node: n\n  store: {endpoint: https://lake.example}\n",
		map[string]string{envAllowlist: "other.example"})
	if !errors.Is(err, driver.ErrEndpointNotAllowed) || !strings.Contains(err.Error(), "lake.example") {
		t.Fatalf("the section's endpoint was not used: %v", err)
	}
}
