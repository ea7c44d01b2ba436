package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A credential written with a YAML tag that does not fit it is refused at its key and line,
// and the refusal never quotes the value, from a store's section and from an export's.
func TestConfigCredentialNeverQuotedInErrors(t *testing.T) {
	l := newLeakScan(t)
	secret := randomSecret(t, "tagged-secret-")
	l.plant("tagged credential", secret)
	stores := filepath.Join(t.TempDir(), "wharf.yaml")
	must(t, os.WriteFile(stores, []byte("stores:\n  s3:\n    endpoint: http://127.0.0.1:1\n"+
		"    secret_access_key: !!int "+secret+"\n"), 0o600))
	r := l.run(cli{}, "-c", stores, "ls", "s3://bucket/").must(t, 2)
	if !strings.Contains(r.err, "wharf.yaml:4: ") || !strings.Contains(r.err, "secret_access_key") {
		t.Errorf("the refusal does not name the key and line: %q", r.err)
	}
	export := quickstart(t, "    table: orders\n", "    table: orders\n    password: !!float "+secret+"\n")
	r = l.run(cli{}, "export", "-c", export).must(t, 2)
	if !strings.Contains(r.err, "quickstart.yaml:18: ") || !strings.Contains(r.err, "password") {
		t.Errorf("the refusal does not name the key and line: %q", r.err)
	}
}

// A store named twice under stores: is refused at the second, rather than the first being
// silently dropped.
func TestConfigStoreNamedTwice(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "wharf.yaml")
	must(t, os.WriteFile(cfg, []byte("stores:\n  lake:\n    backend: s3\n    endpoint: http://127.0.0.1:1\n  lake:\n    backend: s3\n    endpoint: http://127.0.0.1:2\n"), 0o600))
	r := wharf(t, "-c", cfg, "ls", "lake://bucket/").must(t, 2)
	if !strings.Contains(r.err, `wharf.yaml:5: stores: key "lake" given twice`) {
		t.Errorf("a store named twice: %q", r.err)
	}
}
