package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestReleaseBuildHasNoTestHooks builds wharf as a release is built (no wharftest tag) and
// scans the binary: none of the hooks that make a test binary pause or SIGKILL itself, and
// none of the variables that arm them, are in it. The same scan of a build with the tag finds
// them, so the scan can fail.
func TestReleaseBuildHasNoTestHooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wharf twice")
	}
	markers := [][]byte{[]byte("WHARF_TEST_EXPORT_PAUSE"), []byte("WHARF_TEST_SHIP"), []byte("main.killSelf"),
		[]byte("main.(*pausingBucket).Put"), []byte("main.(*hookedBody).Read"),
		[]byte("WHARF_TEST_LEASE"), []byte("main.(*killingBucket).Put"),
		[]byte("WHARF_TEST_BACKFILL_PAUSE"), []byte("main.(*slowSource).Get"), []byte("WHARF_TEST_BACKFILL_DENY"),
		[]byte("WHARF_TEST_BACKFILL_CRASH"), []byte("main.crashingWriter.Close"), []byte("main.(*slowSource).Put"),
		[]byte("WHARF_TEST_BACKFILL_FAIL"), []byte("WHARF_TEST_BACKFILL_BROKEN"), []byte("backfill.BreakForTest"),
		[]byte("WHARF_TEST_S3_SIGN_SKEW"), []byte("s3.(*skewedSigner).SignHTTP")}
	dir := t.TempDir()
	scan := func(tags ...string) []string {
		bin := filepath.Join(dir, "wharf"+string(rune('a'+len(tags))))
		args := append([]string{"build"}, tags...)
		cmd := exec.Command("go", append(args, "-o", bin, ".")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", tags, err, out)
		}
		b, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		var found []string
		for _, m := range markers {
			if bytes.Contains(b, m) {
				found = append(found, string(m))
			}
		}
		return found
	}
	if found := scan(); len(found) != 0 {
		t.Errorf("a release build holds test hooks: %q", found)
	}
	if found := scan("-tags", "wharftest"); len(found) != len(markers) {
		t.Errorf("a wharftest build holds only %q of the markers: the scan cannot tell", found)
	}
}
