package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/internal/testenv"
)

// A byte flipped by a proxy on a download is caught, through the binary on MinIO: cp to a
// local file and cp to another bucket each fail with WHARF_CHECKSUM_MISMATCH naming the
// object, and leave nothing at the destination; the same copies without the fault pass, and
// an object put in parts (whose ETag vouches for no MD5) downloads unflagged.
func TestE2EMinIOFlippedByteOnDownloadIsCaught(t *testing.T) {
	c, _ := minioCLI(t)
	srv := testenv.MinIO(t)
	direct := func(args ...string) result { t.Helper(); return c.run(t, append([]string{"--endpoint", srv.Endpoint}, args...)...) }
	proxy, via := testenv.FaultProxy(t, srv)
	proxied := func(args ...string) result { t.Helper(); return c.run(t, append([]string{"--endpoint", via.Endpoint}, args...)...) }
	src, other := "s3://"+randomBucket(t), "s3://"+randomBucket(t)
	direct("mb", src).must(t, 0)
	direct("mb", other).must(t, 0)
	dir := t.TempDir()
	body := make([]byte, 64<<10)
	_, _ = rand.Read(body)
	big := make([]byte, 11<<20)
	_, _ = rand.Read(big)
	for name, b := range map[string][]byte{"f.bin": body, "big.bin": big} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	direct("cp", filepath.Join(dir, "f.bin"), src+"/f.bin").must(t, 0)
	direct("cp", "--part-size", "5MiB", filepath.Join(dir, "big.bin"), src+"/big.bin").must(t, 0)

	flip := func() *faultproxy.Injection {
		return proxy.Inject(faultproxy.Rule{Method: "GET", Path: "/f.bin", Fault: faultproxy.Corrupt, After: 1000, Times: 1})
	}
	in := flip()
	down := filepath.Join(dir, "down.bin")
	r := proxied("cp", src+"/f.bin", down)
	if r.code != 1 || !strings.Contains(r.err, "WHARF_CHECKSUM_MISMATCH") || !strings.Contains(r.err, src+"/f.bin") || in.Fired() != 1 {
		t.Fatalf("download with a flipped byte: exit %d, stderr %q (fault fired %d)", r.code, r.err, in.Fired())
	}
	if _, err := os.Stat(down); !os.IsNotExist(err) {
		t.Errorf("a corrupt download left %s (%v)", down, err)
	}
	proxy.ClearRules()
	in = flip()
	r = proxied("cp", src+"/f.bin", other+"/f.bin")
	if r.code != 1 || !strings.Contains(r.err, "WHARF_CHECKSUM_MISMATCH") || in.Fired() != 1 {
		t.Fatalf("store-to-store copy with a flipped byte: exit %d, stderr %q", r.code, r.err)
	}
	if r := direct("stat", other+"/f.bin"); r.code != 1 || !strings.Contains(r.err, "WHARF_NOT_FOUND") {
		t.Errorf("a corrupt copy left %s/f.bin: exit %d, stderr %q", other, r.code, r.err)
	}
	proxy.ClearRules()
	proxied("cp", src+"/f.bin", down).must(t, 0)
	proxied("cp", src+"/big.bin", filepath.Join(dir, "big-down.bin")).must(t, 0)
	if got, _ := os.ReadFile(down); string(got) != string(body) {
		t.Error("the download without the fault differs from what was uploaded")
	}
}
