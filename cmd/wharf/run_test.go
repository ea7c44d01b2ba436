package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// result is what one in-process invocation produced.
type result struct {
	out, err string
	code     int
}

// wharfRun runs wharf in this process with stdin and an empty environment. mem:// stores live
// as long as the test binary, so one test can chain commands on them.
func wharfRun(t *testing.T, stdin string, argv ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), argv, streams{in: strings.NewReader(stdin), out: &out, err: &errb},
		func(string) string { return "" })
	return result{out.String(), errb.String(), code}
}

var memN atomic.Int64

// memURL returns a mem:// URL no other test uses.
func memURL(t *testing.T) string {
	return fmt.Sprintf("mem://%s-%d", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), memN.Add(1))
}

func (r result) must(t *testing.T, code int) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.out, r.err)
	}
	return r
}

func TestRunCopyCatStatOnMem(t *testing.T) {
	m := memURL(t)
	r := wharfRun(t, "a,b\n1,2\n", "cp", "-", m+"/in/x.csv").must(t, 0)
	if r.out != "copied - -> "+m+"/in/x.csv (8 bytes)\n" {
		t.Errorf("cp said %q", r.out)
	}
	if r := wharfRun(t, "", "cat", m+"/in/x.csv").must(t, 0); r.out != "a,b\n1,2\n" {
		t.Errorf("cat = %q", r.out)
	}
	r = wharfRun(t, "", "stat", "--format", "json", m+"/in/x.csv").must(t, 0)
	var info struct {
		Key  string
		Size int64
		ETag string
	}
	if err := json.Unmarshal([]byte(r.out), &info); err != nil || info.Key != "in/x.csv" || info.Size != 8 || info.ETag == "" {
		t.Errorf("stat json %q: %+v %v", r.out, info, err)
	}
}

func TestRunCopyIfAbsent(t *testing.T) {
	m := memURL(t)
	wharfRun(t, "one", "cp", "--if-absent", "-", m+"/k").must(t, 0)
	r := wharfRun(t, "two", "cp", "--if-absent", "-", m+"/k").must(t, 1)
	if !strings.Contains(r.err, "[WHARF_PRECONDITION_FAILED]") {
		t.Errorf("stderr %q", r.err)
	}
	if r := wharfRun(t, "", "cat", m+"/k"); r.out != "one" {
		t.Errorf("--if-absent replaced the object: %q", r.out)
	}
}

func TestRunCopyWithinAndAcrossStores(t *testing.T) {
	m, other := memURL(t), memURL(t)
	wharfRun(t, "data", "cp", "-", m+"/src/a.ndjson").must(t, 0)
	wharfRun(t, "", "cp", m+"/src/a.ndjson", m+"/dst/").must(t, 0)
	wharfRun(t, "", "cp", m+"/src/a.ndjson", other+"/").must(t, 0)
	for _, u := range []string{m + "/dst/a.ndjson", other + "/a.ndjson"} {
		if r := wharfRun(t, "", "cat", u).must(t, 0); r.out != "data" {
			t.Errorf("cat %s = %q", u, r.out)
		}
	}
}

func TestRunLs(t *testing.T) {
	m := memURL(t)
	for _, k := range []string{"logs/a.ndjson", "logs/2024/b.ndjson", "logs/2024/c.ndjson", "top.csv"} {
		wharfRun(t, "x", "cp", "-", m+"/"+k).must(t, 0)
	}
	r := wharfRun(t, "", "ls", m+"/logs/").must(t, 0)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "PRE 2024/") || !strings.HasSuffix(lines[1], " 1 a.ndjson") {
		t.Errorf("ls logs/:\n%s", r.out)
	}
	r = wharfRun(t, "", "ls", "-r", "--format", "json", m).must(t, 0)
	var keys []string
	for line := range strings.SplitSeq(strings.TrimSpace(r.out), "\n") {
		var o struct{ Key string }
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		keys = append(keys, o.Key)
	}
	if got := strings.Join(keys, " "); got != "logs/2024/b.ndjson logs/2024/c.ndjson logs/a.ndjson top.csv" {
		t.Errorf("ls -r keys: %s", got)
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		argv []string
		code int
		want string
	}{
		{[]string{"ls"}, 2, "ls: want one URL, got 0 argument(s) (see 'wharf ls --help') [WHARF_USAGE]"},
		{[]string{"cp", "a"}, 2, "[WHARF_USAGE]"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"ls", "--nope", "x"}, 2, "unknown flag: --nope"},
		{[]string{"--format", "xml", "version"}, 2, `--format "xml"`},
		{[]string{"cat", "ftp://x/y"}, 2, "[WHARF_ENDPOINT_UNSUPPORTED]"},
		{[]string{"cat", "mem://m"}, 2, "[WHARF_KEY_INVALID]"},
		{[]string{"cat", "mem://m/a/../b"}, 2, "[WHARF_KEY_INVALID]"},
		{[]string{"cat", "mem://nothing-here/k"}, 1, `mem://nothing-here/k: get "k": object does not exist [WHARF_NOT_FOUND]`},
		{[]string{"--endpoint", "http://example.com", "ls", "s3://b/"}, 2, "[WHARF_ENDPOINT_INSECURE]"},
		{[]string{"mb", "mem://m/k"}, 2, "give the bucket alone"},
		{[]string{"cp", "-", "-", "--if-absent"}, 2, "[WHARF_USAGE]"},
	}
	for _, tt := range tests {
		r := wharfRun(t, "", tt.argv...)
		if r.code != tt.code || !strings.Contains(r.err, tt.want) || strings.Count(r.err, "\n") != 1 {
			t.Errorf("wharf %s: exit %d stderr %q; want exit %d and %q on one line", strings.Join(tt.argv, " "), r.code, r.err, tt.code, tt.want)
		}
	}
}

func TestRunJSONError(t *testing.T) {
	r := wharfRun(t, "", "--format", "json", "stat", "mem://nothing/k").must(t, 1)
	var e struct{ Error, Code string }
	if err := json.Unmarshal([]byte(r.err), &e); err != nil || e.Code != "WHARF_NOT_FOUND" || !strings.Contains(e.Error, `"k"`) {
		t.Errorf("stderr %q: %+v %v", r.err, e, err)
	}
	// Also for what cobra refuses before it parses a flag.
	for _, argv := range [][]string{{"--format", "json", "frobnicate"}, {"--format=json", "frobnicate", "x"}, {"--format", "json", "ls", "--nope"}} {
		r := wharfRun(t, "", argv...).must(t, 2)
		var e struct{ Error, Code string }
		if err := json.Unmarshal([]byte(r.err), &e); err != nil || e.Code != "WHARF_USAGE" {
			t.Errorf("wharf %v: stderr %q is not a JSON usage error: %v", argv, r.err, err)
		}
	}
}

func TestRunVersion(t *testing.T) {
	r := wharfRun(t, "", "version", "--format", "json").must(t, 0)
	var v versionInfo
	if err := json.Unmarshal([]byte(r.out), &v); err != nil || v.Version == "" || !strings.HasPrefix(v.Go, "go") {
		t.Errorf("version json %q: %+v %v", r.out, v, err)
	}
	if r := wharfRun(t, "", "version").must(t, 0); !strings.HasPrefix(r.out, "wharf ") {
		t.Errorf("version = %q", r.out)
	}
}

func TestRunMakeBucketAndProbeOnMem(t *testing.T) {
	m := memURL(t)
	if r := wharfRun(t, "", "mb", m).must(t, 0); r.out != "made bucket "+m+"\n" {
		t.Errorf("mb said %q", r.out)
	}
	if r := wharfRun(t, "", "-q", "mb", m).must(t, 0); r.out != "" {
		t.Errorf("mb -q said %q", r.out)
	}
	r := wharfRun(t, "", "probe", "--format", "json", m).must(t, 0)
	var res struct {
		Coordination string
		Capabilities map[string]struct{ Verdict string }
	}
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || res.Coordination != "cas" || len(res.Capabilities) < 6 {
		t.Errorf("probe json %q: %+v %v", r.out, res, err)
	}
	if r := wharfRun(t, "", "ls", "-r", m).must(t, 0); r.out != "" {
		t.Errorf("probe left objects behind:\n%s", r.out)
	}
}

// Store URLs complete one level at a time from a listing; local paths are left to the shell.
func TestCompletion(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"logs/a.txt": "a", "logs/2024/b.txt": "b", "top.csv": "t"})
	base := "file://" + filepath.ToSlash(dir) + "/"
	r := wharfRun(t, "", "__complete", "ls", base+"logs/a").must(t, 0)
	for _, want := range []string{base + "logs/2024/\n", base + "logs/a.txt\n", ":6\n"} { // NoSpace|NoFileComp
		if !strings.Contains(r.out, want) {
			t.Errorf("completing %slogs/a: %q lacks %q", base, r.out, want)
		}
	}
	if strings.Contains(r.out, "top.csv") {
		t.Errorf("completion listed outside the typed directory: %q", r.out)
	}
	if r := wharfRun(t, "", "__complete", "cp", "./loc").must(t, 0); !strings.HasSuffix(r.out, ":0\n") {
		t.Errorf("a local path is not left to the shell: %q", r.out)
	}
	if r := wharfRun(t, "", "completion", "bash").must(t, 0); !strings.Contains(r.out, "__start_wharf") {
		t.Errorf("wharf completion bash printed no script")
	}
}
