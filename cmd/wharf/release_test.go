package main

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// releaseTags are the build tags scripts/release.sh gives (its TAGS, which say why); the
// end-to-end tests' binary is built with them too. TestReleaseBuild checks they match.
const releaseTags = "grpcnotrace,disable_grpc_modules"

// releaseBuild builds wharf with scripts/release.sh -d, as a release is built, for this
// machine's platform alone, and returns the binary (SHA256SUMS is beside it). The script
// fails if what it built is not static or is over its size bound.
func releaseBuild(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "release.sh"), "-d", dir, "v0.0.0-test")
	cmd.Env = append(os.Environ(), "PLATFORMS="+runtime.GOOS+"/"+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release.sh: %v\n%s", err, out)
	}
	name := "wharf-v0.0.0-test-" + runtime.GOOS + "-" + runtime.GOARCH
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return filepath.Join(dir, name)
}

// checkSums checks the SHA256SUMS beside bin: one line, "<sha256>  <name>", of bin.
func checkSums(t *testing.T, bin string) {
	t.Helper()
	sums, err := os.ReadFile(filepath.Join(filepath.Dir(bin), "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%x  %s\n", sha256.Sum256(b), filepath.Base(bin))
	if string(sums) != want {
		t.Errorf("SHA256SUMS holds %q, want %q", sums, want)
	}
}

// dynamicLinking says what makes an ELF binary depend on the host's dynamic linker ("" for a
// static binary): an interpreter (PT_INTERP) or a shared library it needs (DT_NEEDED).
func dynamicLinking(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var why []string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return "", err
			}
			why = append(why, "interpreter "+strings.TrimRight(string(b), "\x00"))
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return "", err
	}
	for _, l := range libs {
		why = append(why, "needs "+l)
	}
	return strings.Join(why, ", "), nil
}

// assertStatic fails the test if the binary at path is dynamically linked; it skips on a
// platform whose binaries are not ELF.
func assertStatic(t *testing.T, path string) {
	t.Helper()
	why, err := dynamicLinking(path)
	var fe *elf.FormatError
	if errors.As(err, &fe) {
		t.Skipf("%s is not an ELF binary: %v", path, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if why != "" {
		t.Errorf("%s is dynamically linked (%s): build it with CGO_ENABLED=0, as scripts/release.sh does", path, why)
	}
}

// TestBinaryIsStatic inspects the binary the end-to-end tests run (built by TestMain as a
// release is, with the test hooks' tag): it has no interpreter and needs no shared library,
// so it runs on a host without glibc. Cheap: it builds nothing.
func TestBinaryIsStatic(t *testing.T) {
	assertStatic(t, wharfBin)
}

// TestReleaseBuild builds wharf with scripts/release.sh -d (which checks cgo and size itself)
// and inspects the result: static, built with releaseTags, stamped with the version it was
// given and its build date, and listed in SHA256SUMS with its sha256.
func TestReleaseBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wharf")
	}
	bin := releaseBuild(t)
	assertStatic(t, bin)
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range info.Settings {
		if s.Key == "-tags" && s.Value != releaseTags {
			t.Errorf("scripts/release.sh builds with -tags %s; the end-to-end tests build with %s: make them match", s.Value, releaseTags)
		}
	}
	if linked := unwantedModules(info); len(linked) != 0 {
		t.Errorf("the release binary links %q: modules wharf never runs, which a release tag (scripts/release.sh) is there to keep out", linked)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "wharf v0.0.0-test ") || !strings.Contains(string(out), ", built 20") {
		t.Errorf("wharf version: %v: %q, want the stamped version v0.0.0-test and its build date", err, out)
	}
	checkSums(t, bin)
	if fi, err := os.Stat(bin); err == nil {
		t.Logf("release binary: %d bytes (%.1f MiB)", fi.Size(), float64(fi.Size())/(1<<20))
	}
}

// unwantedModules lists the modules of a build that a release tag exists to keep out: the xDS
// stack (envoy's and CNCF's protobuf APIs, 10 MiB) that the Cloud Storage SDK's gRPC DirectPath
// registers at init unless built with disable_grpc_modules. (grpcnotrace's golang.org/x/net/trace
// is in a module wharf needs anyway; the size bound watches that one.)
func unwantedModules(info *buildinfo.BuildInfo) []string {
	var linked []string
	for _, m := range info.Deps {
		if strings.HasPrefix(m.Path, "github.com/envoyproxy/") || strings.HasPrefix(m.Path, "github.com/cncf/xds") {
			linked = append(linked, m.Path)
		}
	}
	return linked
}

// TestReleaseTagsKeepOutTheXDSStack builds wharf without disable_grpc_modules and finds the
// xDS modules in it, so the check TestReleaseBuild makes of the release binary can fail.
func TestReleaseTagsKeepOutTheXDSStack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wharf")
	}
	bin := filepath.Join(t.TempDir(), "wharf")
	build := exec.Command("go", "build", "-trimpath", "-tags", "grpcnotrace", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if linked := unwantedModules(info); len(linked) == 0 {
		t.Error("a build without disable_grpc_modules links no xDS module: the check on the release binary cannot fail")
	}
}

// TestReleaseBuildHasNoTestHooks builds wharf as a release is built (scripts/release.sh, no
// wharftest tag) and scans the binary: none of the hooks that make a test binary pause or
// SIGKILL itself, and none of the variables that arm them, are in it. The same scan of the
// end-to-end tests' build, which has the tag, finds them, so the scan can fail.
func TestReleaseBuildHasNoTestHooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wharf")
	}
	markers := [][]byte{[]byte("WHARF_TEST_EXPORT_PAUSE"), []byte("WHARF_TEST_SHIP"), []byte("main.killSelf"),
		[]byte("main.(*pausingBucket).Put"), []byte("main.(*hookedBody).Read"),
		[]byte("WHARF_TEST_LEASE"), []byte("main.(*killingBucket).Put"),
		[]byte("WHARF_TEST_BACKFILL_PAUSE"), []byte("main.(*slowSource).Get"), []byte("WHARF_TEST_BACKFILL_DENY"),
		[]byte("WHARF_TEST_BACKFILL_CRASH"), []byte("main.crashingWriter.Close"), []byte("main.(*slowSource).Put"),
		[]byte("WHARF_TEST_BACKFILL_FAIL"), []byte("WHARF_TEST_BACKFILL_BROKEN"), []byte("backfill.BreakForTest"),
		[]byte("WHARF_TEST_S3_SIGN_SKEW"), []byte("s3.(*skewedSigner).SignHTTP")}
	scan := func(bin string) []string {
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
	if found := scan(releaseBuild(t)); len(found) != 0 {
		t.Errorf("a release build holds test hooks: %q", found)
	}
	if found := scan(wharfBin); len(found) != len(markers) {
		t.Errorf("a wharftest build holds only %q of the markers: the scan cannot tell", found)
	}
}
