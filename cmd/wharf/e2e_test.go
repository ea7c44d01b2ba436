package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// wharfBin is the real binary, built once by TestMain; the end-to-end tests run it as a user
// would.
var wharfBin string

// cacheHome is XDG_CACHE_HOME for every run: the tests never touch the developer's cache.
var cacheHome string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "wharf-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	wharfBin = filepath.Join(dir, "wharf")
	// Probe verdicts are remembered in the user's cache directory: one of the run's own.
	cacheHome = filepath.Join(dir, "cache")
	// The end-to-end tests drive the test hooks (testhooks.go): build with their tag, and
	// otherwise as scripts/release.sh builds (static, trimmed paths, its tags), so that the tests run
	// the binary users get and share its build cache.
	build := exec.Command("go", "build", "-trimpath", "-tags", "wharftest,"+releaseTags, "-o", wharfBin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building wharf for the end-to-end tests: %v\n", err)
		return 1
	}
	return m.Run()
}

// cli describes one run of the binary.
type cli struct {
	stdin string
	env   []string // added to a clean environment (PATH, HOME, TMPDIR only)
	dir   string   // working directory; "" is the test's
}

// baseEnv is the environment every run starts from: nothing from the developer's AWS setup
// leaks in.
func baseEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, "XDG_CACHE_HOME="+cacheHome, "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
}

func (c cli) command(args ...string) *exec.Cmd {
	cmd := exec.Command(wharfBin, args...)
	cmd.Env = append(baseEnv(), c.env...)
	cmd.Dir = c.dir
	cmd.Stdin = strings.NewReader(c.stdin)
	return cmd
}

// run runs the binary to completion.
func (c cli) run(t *testing.T, args ...string) result {
	t.Helper()
	cmd := c.command(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running wharf %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// wharf runs the binary with no stdin and a clean environment.
func wharf(t *testing.T, args ...string) result {
	t.Helper()
	return cli{}.run(t, args...)
}

// writeFiles creates files (relative path → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func lastFields(out string) []string {
	var names []string
	for line := range strings.SplitSeq(strings.TrimRight(out, "\n"), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			names = append(names, f[len(f)-1])
		}
	}
	return names
}
