package main

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EBackfillListenInUse: a --listen port another process holds is the backfill's own
// error, naming the address and the clash, exit 1 (not a usage error), before any record is
// read.
func TestE2EBackfillListenInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "logs"), map[string]string{"a.ndjson": "{\"n\":1}\n{\"n\":2}\n"})
	r := wharf(t, "backfill", filepath.Join(dir, "logs")+"/", "--to", "-", "--coordinator", "solo",
		"--listen", ln.Addr().String())
	if r.code != 1 || !strings.Contains(r.err, "[WHARF_BACKFILL_LISTEN_FAILED]") || !strings.Contains(r.err, ln.Addr().String()) ||
		!strings.Contains(r.err, "address already in use") || r.out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s; want exit 1, nothing read, and WHARF_BACKFILL_LISTEN_FAILED naming %s and the clash",
			r.code, r.out, r.err, ln.Addr())
	}
	r = wharf(t, "backfill", filepath.Join(dir, "logs")+"/", "--to", "-", "--coordinator", "solo", "--listen", "0.0.0.0:0")
	if r.code != 2 || !strings.Contains(r.err, "not a loopback address") {
		t.Fatalf("exit %d, stderr %s; want exit 2 refusing a listen address beyond this machine", r.code, r.err)
	}
}
