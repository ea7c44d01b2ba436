package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
)

// --if-absent never replaces, even through a proxy that drops If-None-Match: the store there
// is not proven to enforce the condition, so cp refuses (WHARF_COORDINATION_UNPROVEN) and
// the object keeps its bytes; straight to MinIO, which enforces it, the copy is refused by
// the store itself. The verdicts are remembered per endpoint: a second run does not probe.
func TestE2EIfAbsentOnAStoreThatIgnoresTheCondition(t *testing.T) {
	srv := testenv.MinIO(t)
	proxy, behind := testenv.FaultProxy(t, srv)
	proxy.StripConditions(true)
	c, direct := minioCLI(t)
	c.env = append(c.env, "WHARF_ENDPOINT_ALLOWLIST=127.0.0.1")
	viaProxy := []string{"--endpoint", behind.Endpoint}
	bucket := "s3://" + randomBucket(t)
	c.run(t, append(direct, "mb", bucket)...).must(t, 0)
	local := t.TempDir()
	writeFiles(t, local, map[string]string{"old.csv": "old\n", "new.csv": "new\n", "tree/a.csv": "new a\n"})
	c.run(t, append(direct, "cp", filepath.Join(local, "old.csv"), bucket+"/k.csv")...).must(t, 0)
	c.run(t, append(direct, "cp", filepath.Join(local, "old.csv"), bucket+"/tree/a.csv")...).must(t, 0)

	stripped := func() int {
		n := 0
		for _, r := range proxy.Requests() {
			if r.Stripped {
				n++
			}
		}
		return n
	}
	afterFirst := 0
	for i := range 2 {
		r := c.run(t, append(viaProxy, "cp", "--if-absent", filepath.Join(local, "new.csv"), bucket+"/k.csv")...).must(t, 1)
		if !strings.Contains(r.err, "[WHARF_COORDINATION_UNPROVEN]") || !strings.Contains(r.err, behind.Endpoint) {
			t.Errorf("run %d: cp --if-absent through the proxy: %q", i, r.err)
		}
		r = c.run(t, append(viaProxy, "cp", "-r", "--if-absent", filepath.Join(local, "tree")+"/", bucket+"/tree/")...).must(t, 1)
		if !strings.Contains(r.err, "[WHARF_COORDINATION_UNPROVEN]") {
			t.Errorf("run %d: cp -r --if-absent through the proxy: %q", i, r.err)
		}
		if i == 0 {
			afterFirst = stripped()
		}
	}
	for _, k := range []string{"k.csv", "tree/a.csv"} {
		if got := c.run(t, append(direct, "cat", bucket+"/"+k)...).must(t, 0).out; got != "old\n" {
			t.Errorf("%s was replaced: %q", k, got)
		}
	}
	// One probe, on the first run; later runs use its remembered verdict.
	if afterFirst == 0 || stripped() != afterFirst {
		t.Errorf("the proxy stripped %d conditional requests in the first run and %d in all: want one probe's, once", afterFirst, stripped())
	}
	cache := readFile(t, filepath.Join(cacheHome, "wharf", "probes.json"))
	if !strings.Contains(cache, behind.Endpoint) || !strings.Contains(cache, `"conditional_create": "no"`) {
		t.Errorf("the remembered verdicts:\n%s", cache)
	}

	// Straight to MinIO the condition holds: the store refuses, and nothing is replaced.
	r := c.run(t, append(direct, "cp", "--if-absent", filepath.Join(local, "new.csv"), bucket+"/k.csv")...).must(t, 1)
	if !strings.Contains(r.err, "[WHARF_PRECONDITION_FAILED]") {
		t.Errorf("cp --if-absent to MinIO: %q", r.err)
	}
	c.run(t, append(direct, "cp", "--if-absent", filepath.Join(local, "new.csv"), bucket+"/fresh.csv")...).must(t, 0)
	// Within the bucket too, although MinIO ignores the condition on its own CopyObject.
	r = c.run(t, append(direct, "cp", "--if-absent", bucket+"/k.csv", bucket+"/fresh.csv")...).must(t, 1)
	if !strings.Contains(r.err, "[WHARF_PRECONDITION_FAILED]") {
		t.Errorf("cp --if-absent within MinIO onto an existing key: %q", r.err)
	}
	c.run(t, append(direct, "cp", "-r", "--if-absent", bucket+"/tree/", bucket+"/k.csv.d/")...).must(t, 0)
	r = c.run(t, append(direct, "cp", "-r", "--if-absent", bucket+"/tree/", bucket+"/k.csv.d/")...).must(t, 1)
	if !strings.Contains(r.err, "[WHARF_PRECONDITION_FAILED]") {
		t.Errorf("cp -r --if-absent within MinIO onto existing keys: %q", r.err)
	}
	for k, want := range map[string]string{"fresh.csv": "new\n", "k.csv.d/a.csv": "old\n"} {
		if got := c.run(t, append(direct, "cat", bucket+"/"+k)...).must(t, 0).out; got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(cacheHome, "wharf", "probes.json")); err != nil {
		t.Fatal(err)
	}
}
