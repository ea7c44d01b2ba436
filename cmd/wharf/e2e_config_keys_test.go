package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// configAllSections is a config file with every section, each valid; the line after the
// marker of a section (# <name>) is where a misspelt key goes.
const configAllSections = `state: .wharf/state.db
# top
exports:
  - name: orders
    source: sqlite://./src.db
    table: orders
    chunk_key: id
    destination: ./out/{export}/{date}/
    # exports
ship:
  spool: ./spool
  to: ./bucket
  pipeline: edge
  retry:
    initial: 2s
    # ship.retry
  # ship
backfill:
  to: ./lake/
  nats:
    replicas: 1
    # backfill.nats
  # backfill
lease:
  ttl: 5m
  # lease
load:
  orders:
    target: postgres://loader@127.0.0.1:9/warehouse
    # load.orders
stores:
  lake:
    backend: s3
    endpoint: http://127.0.0.1:9
    # stores.lake
endpoint_allowlist: [127.0.0.1]
`

// TestE2EConfigMisspeltKeyRefusedEverywhere: a misspelt key under any section of the config
// file is refused by every command that reads the file (not only by the command whose
// section it is): exit 2, WHARF_CONFIG_INVALID, naming the key, where it is and its line.
func TestE2EConfigMisspeltKeyRefusedEverywhere(t *testing.T) {
	commands := [][]string{
		{"export"}, {"validate"}, {"runs"}, {"ship", "--drain", "--node", "n1"},
		{"backfill", "./logs/"}, {"backfill", "status", "--job", "j", "./logs/"},
		{"lease", "show", "nightly", "--store", "./locks"}, {"ls", "./"}, {"load"},
	}
	sections := []struct{ marker, key, indent, path string }{
		{"# top", "stat_dir", "", "the top level"},
		{"# exports", "chunk_size", "    ", "exports[0]"},
		{"# ship.retry", "inital", "    ", "ship.retry"},
		{"# ship", "upload_concurency", "  ", "ship"},
		{"# backfill.nats", "replica", "    ", "backfill.nats"},
		{"# backfill", "max_in_flite", "  ", "backfill"},
		{"# lease", "renew_evry", "  ", "lease"},
		{"# stores.lake", "endpont", "    ", "stores.lake"},
		{"# load.orders", "tabel", "    ", "load.orders"},
	}
	dir := t.TempDir()
	c := cli{dir: dir}
	for _, s := range sections {
		lines := strings.Split(configAllSections, "\n")
		line := 0
		for i, l := range lines {
			if strings.TrimSpace(l) == s.marker {
				lines[i] = s.indent + s.key + ": 1"
				line = i + 1
			}
		}
		if line == 0 {
			t.Fatalf("no marker %s", s.marker)
		}
		path := filepath.Join(dir, strings.ReplaceAll(s.path, ".", "-")+".yaml")
		writeFiles(t, dir, map[string]string{filepath.Base(path): strings.Join(lines, "\n")})
		where := fmt.Sprintf("%s:%d: %s: unknown key %q", path, line, s.path, s.key)
		for _, args := range commands {
			r := c.run(t, append([]string{"-c", path}, args...)...)
			if r.code != 2 || !strings.Contains(r.err, where) || !strings.Contains(r.err, "[WHARF_CONFIG_INVALID]") {
				t.Errorf("%s under %s: wharf %s: exit %d, stderr %q; want exit 2, WHARF_CONFIG_INVALID and %q",
					s.key, s.path, strings.Join(args, " "), r.code, r.err, where)
			}
		}
	}
	// The file without a misspelt key is read by all of them: the failures above are the key's.
	writeFiles(t, dir, map[string]string{"ok.yaml": configAllSections})
	for _, args := range commands {
		r := c.run(t, append([]string{"-c", filepath.Join(dir, "ok.yaml")}, args...)...)
		if strings.Contains(r.err, "unknown key") || strings.Contains(r.err, "WHARF_CONFIG_INVALID") {
			t.Errorf("the valid file: wharf %s: exit %d, stderr %s", strings.Join(args, " "), r.code, r.err)
		}
	}
}
