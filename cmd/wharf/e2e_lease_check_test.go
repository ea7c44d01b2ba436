package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/lease"
)

// A remembered cas verdict that this user can read but not update (a cache written by
// another user: `sudo wharf probe` with the user's HOME) is still checked: the count of
// acquisitions since the last check cannot be kept beside it, and each single-run process
// used to count from zero and never reach lease.CheckEvery, so a store that stopped
// enforcing conditions was trusted for the verdict's whole day.
func TestE2ELeaseStoreThatStopsEnforcingConditionsIsRefusedUnderAFixedCache(t *testing.T) {
	srv := testenv.MinIO(t)
	p, psrv := testenv.FaultProxy(t, srv)
	url, _ := leaseCLI(t)
	c, _ := minioCLI(t)
	cache := t.TempDir()
	c.env = append(c.env, "WHARF_NODE_ID=host-a", "XDG_CACHE_HOME="+cache)
	run := func() result {
		return c.run(t, "--endpoint", psrv.Endpoint, "lease", "run", "job", "--store", url, "--", "true")
	}
	run().must(t, 0) // probed, and remembered cas
	// The verdicts can be read but not updated: their lock cannot be opened for writing
	// (a directory in its place; the tests run as a user whom file modes do not stop).
	lock := filepath.Join(cache, "wharf", "probes.json.lock")
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(lock, 0o500); err != nil {
		t.Fatal(err)
	}
	p.StripConditions(true)
	for i := 1; i <= 2*lease.CheckEvery; i++ {
		r := run()
		switch {
		case r.code == 0:
		case strings.Contains(r.err, "WHARF_COORDINATION_UNPROVEN") && strings.Contains(r.err, "no longer enforces"):
			t.Logf("refused by run %d after the store stopped enforcing conditions", i)
			return
		default:
			t.Fatalf("run %d after the proxy began stripping conditions: exit %d: %s", i, r.code, r.err)
		}
	}
	t.Fatalf("%d runs after the proxy began stripping conditions, none was refused", 2*lease.CheckEvery)
}
