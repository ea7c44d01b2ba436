package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wharfdata/wharf/transfer"
)

var sample = map[string]string{
	"orders/2024-01-01.csv":           "id,amount\n1,100\n2,250\n",
	"orders/2024-01-02.csv":           "id,amount\n3,75\n",
	"events/date=2024-01-01/p0.jsonl": `{"type":"created"}` + "\n",
	"top.txt":                         "hello\n",
}

func TestE2EFileLs(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, sample)
	r := wharf(t, "ls", "-r", dir).must(t, 0)
	want := []string{"events/date=2024-01-01/p0.jsonl", "orders/2024-01-01.csv", "orders/2024-01-02.csv", "top.txt"}
	if got := lastFields(r.out); !slices.Equal(got, want) {
		t.Errorf("ls -r names %q, want %q\n%s", got, want, r.out)
	}
	if !strings.Contains(r.out, "        22 orders/2024-01-01.csv\n") {
		t.Errorf("ls -r lacks the size of orders/2024-01-01.csv:\n%s", r.out)
	}
	r = wharf(t, "ls", dir).must(t, 0)
	if got := lastFields(r.out); !slices.Equal(got, []string{"events/", "orders/", "top.txt"}) {
		t.Errorf("ls names %q\n%s", got, r.out)
	}
	if !strings.Contains(r.out, "PRE events/") {
		t.Errorf("prefixes not shown as PRE:\n%s", r.out)
	}
	r = wharf(t, "ls", filepath.Join(dir, "orders")).must(t, 0)
	if got := lastFields(r.out); !slices.Equal(got, []string{"2024-01-01.csv", "2024-01-02.csv"}) {
		t.Errorf("ls orders names %q", got)
	}
}

func TestE2EFileLsJSON(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, sample)
	r := wharf(t, "ls", "--format", "json", dir).must(t, 0)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 NDJSON lines, got:\n%s", r.out)
	}
	var p struct{ Prefix string }
	var o struct {
		Key  string
		Size int64
	}
	if err := json.Unmarshal([]byte(lines[0]), &p); err != nil || p.Prefix != "events/" {
		t.Errorf("line 1 %q: %+v %v", lines[0], p, err)
	}
	if err := json.Unmarshal([]byte(lines[2]), &o); err != nil || o.Key != "top.txt" || o.Size != 6 {
		t.Errorf("line 3 %q: %+v %v", lines[2], o, err)
	}
}

func TestE2EFileCatStat(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, sample)
	f := filepath.Join(dir, "orders", "2024-01-01.csv")
	if r := wharf(t, "cat", f).must(t, 0); r.out != sample["orders/2024-01-01.csv"] {
		t.Errorf("cat = %q", r.out)
	}
	if r := wharf(t, "cat", "file://"+f).must(t, 0); r.out != sample["orders/2024-01-01.csv"] {
		t.Errorf("cat file:// = %q", r.out)
	}
	r := wharf(t, "stat", f).must(t, 0)
	for _, want := range []string{"size:          22 (22 B)\n", "etag:          ", "last-modified: 20"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("stat lacks %q:\n%s", want, r.out)
		}
	}
	r = wharf(t, "stat", "--format", "json", f).must(t, 0)
	var info struct {
		Key          string
		Size         int64
		ETag         string
		LastModified time.Time `json:"last_modified"`
	}
	if err := json.Unmarshal([]byte(r.out), &info); err != nil || info.Key != "2024-01-01.csv" || info.Size != 22 || info.ETag == "" || info.LastModified.IsZero() {
		t.Errorf("stat json %q: %+v %v", r.out, info, err)
	}
}

func TestE2ECopyBothWays(t *testing.T) {
	src, storeDir, down := t.TempDir(), t.TempDir(), t.TempDir()
	writeFiles(t, src, map[string]string{"report.csv": "a,b\n1,2\n"})
	wharf(t, "mb", storeDir).must(t, 0) // a file store: its paths are keys of it
	// Up: into a directory URL, the key takes the source's base name.
	r := wharf(t, "cp", filepath.Join(src, "report.csv"), "file://"+storeDir+"/").must(t, 0)
	if !strings.Contains(r.out, "file://"+storeDir+"/report.csv (8 bytes)") {
		t.Errorf("cp up said %q", r.out)
	}
	if got := readFile(t, filepath.Join(storeDir, "report.csv")); got != "a,b\n1,2\n" {
		t.Errorf("stored %q", got)
	}
	// Down: into an existing local directory, then to an explicit name.
	wharf(t, "cp", "file://"+storeDir+"/report.csv", down).must(t, 0)
	wharf(t, "cp", "file://"+storeDir+"/report.csv", filepath.Join(down, "renamed.csv")).must(t, 0)
	for _, name := range []string{"report.csv", "renamed.csv"} {
		if got := readFile(t, filepath.Join(down, name)); got != "a,b\n1,2\n" {
			t.Errorf("downloaded %s = %q", name, got)
		}
	}
	if got := entries(t, down); !slices.Equal(got, []string{"renamed.csv", "report.csv"}) {
		t.Errorf("download dir holds %q: temporary files left behind?", got)
	}
	// Store to store, and JSON output.
	r = wharf(t, "cp", "--format", "json", "file://"+storeDir+"/report.csv", "file://"+storeDir+"/copy/r.csv").must(t, 0)
	var res transfer.Copied
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || res.Size != 8 || res.Destination != "file://"+storeDir+"/copy/r.csv" {
		t.Errorf("cp json %q: %+v %v", r.out, res, err)
	}
}

func TestE2ECopyStdio(t *testing.T) {
	dir := t.TempDir()
	cli{stdin: "streamed\n"}.run(t, "cp", "-", "file://"+dir+"/in.txt").must(t, 0)
	if r := wharf(t, "cp", "file://"+dir+"/in.txt", "-").must(t, 0); r.out != "streamed\n" {
		t.Errorf("cp to - wrote %q", r.out)
	}
}

func TestE2ECopyIfAbsent(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "new", "dst.txt": "old", "store/k": "old"})
	r := wharf(t, "cp", "--if-absent", filepath.Join(dir, "a.txt"), filepath.Join(dir, "dst.txt")).must(t, 1)
	if !strings.Contains(r.err, "[WHARF_PRECONDITION_FAILED]") || readFile(t, filepath.Join(dir, "dst.txt")) != "old" {
		t.Errorf("local --if-absent: %q, file %q", r.err, readFile(t, filepath.Join(dir, "dst.txt")))
	}
	r = wharf(t, "cp", "--if-absent", filepath.Join(dir, "a.txt"), "file://"+dir+"/store/k").must(t, 1)
	if !strings.Contains(r.err, "[WHARF_PRECONDITION_FAILED]") || readFile(t, filepath.Join(dir, "store", "k")) != "old" {
		t.Errorf("store --if-absent: %q", r.err)
	}
	wharf(t, "cp", "--if-absent", filepath.Join(dir, "a.txt"), "file://"+dir+"/store/k2").must(t, 0)
}

func TestE2EMakeBucketOnFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new-store")
	r := wharf(t, "mb", dir).must(t, 0)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("mb did not create %s: %v (%q)", dir, err, r.out)
	}
	wharf(t, "mb", dir).must(t, 0) // again: it exists and is ours
	if r := wharf(t, "ls", "-r", dir).must(t, 0); r.out != "" {
		t.Errorf("new store lists %q", r.out)
	}
}

func TestE2EProbeOnFile(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, sample)
	r := wharf(t, "probe", dir).must(t, 0)
	for _, want := range []string{"coordination:  cas", "CAPABILITY", "conditional_create   yes", "clock skew:"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("probe output lacks %q:\n%s", want, r.out)
		}
	}
	r = wharf(t, "probe", "--format", "json", dir).must(t, 0)
	var res struct {
		Coordination string
		Store        struct{ Scheme string }
		Capabilities map[string]struct{ Verdict, Evidence string }
	}
	if err := json.Unmarshal([]byte(r.out), &res); err != nil {
		t.Fatalf("probe json %q: %v", r.out, err)
	}
	if res.Store.Scheme != "file" || res.Capabilities["conditional_create"].Verdict == "" || res.Coordination == "" {
		t.Errorf("probe json: %+v", res)
	}
	if got := lastFields(wharf(t, "ls", "-r", dir).must(t, 0).out); len(got) != len(sample) {
		t.Errorf("probe left objects behind: %q", got)
	}
}

func TestE2EMissingFileIsNamed(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.csv")
	for _, argv := range [][]string{{"cat", missing}, {"stat", missing}, {"cp", missing, dir + "/out/"}} {
		r := wharf(t, argv...).must(t, 1)
		if !strings.Contains(r.err, "nope.csv") || !strings.HasSuffix(r.err, "[WHARF_NOT_FOUND]\n") || strings.Count(r.err, "\n") != 1 {
			t.Errorf("wharf %v: stderr %q", argv, r.err)
		}
	}
	r := wharf(t, "ls", filepath.Join(dir, "no-such-dir")).must(t, 1)
	if !strings.Contains(r.err, "no-such-dir") || !strings.Contains(r.err, "[WHARF_BUCKET_MISSING]") {
		t.Errorf("ls of a missing directory: %q", r.err)
	}
}

func TestE2EConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		c    cli
		argv []string
		want string
	}{
		{"invalid key", cli{}, []string{"cat", "mem://m/a//b"}, "[WHARF_KEY_INVALID]"},
		{"bucket, not object", cli{}, []string{"stat", "s3://bucket/"}, "[WHARF_KEY_INVALID]"},
		{"ftp", cli{}, []string{"ls", "ftp://x"}, `scheme "ftp"`},
		{"insecure flag", cli{}, []string{"--endpoint", "http://192.0.2.1:9000", "ls", "s3://b/"}, "host 192.0.2.1 is not loopback"},
		{"insecure env", cli{env: []string{"AWS_ENDPOINT_URL=http://192.0.2.1:9000"}}, []string{"cat", "s3://b/k"}, "[WHARF_ENDPOINT_INSECURE]"},
		{"password in an endpoint", cli{}, []string{"--endpoint", "http://u:s3cr3tv4lue@127.0.0.1:9000", "cat", "s3://b/k"}, "[WHARF_CREDENTIAL_LITERAL]"},
		{"password in AWS_ENDPOINT_URL", cli{env: []string{"AWS_ENDPOINT_URL=https://u:s3cr3tv4lue@s3.example"}}, []string{"cat", "s3://b/k"}, "[WHARF_CREDENTIAL_LITERAL]"},
		{"literal credential in URL", cli{}, []string{"cat", "s3://AKIAEXAMPLE:s3cr3tv4lue@b/k"}, "[WHARF_CREDENTIAL_LITERAL]"},
		{"option the store lacks", cli{}, []string{"--region", "eu-west-1", "ls", "./"}, "[WHARF_CONFIG_INVALID]"},
		{"options in the URL", cli{}, []string{"ls", "s3://b?endpoint=http://127.0.0.1:9000"}, "[WHARF_CONFIG_INVALID]"},
	}
	for _, tt := range tests {
		start := time.Now()
		r := tt.c.run(t, tt.argv...)
		if r.code != 2 || !strings.Contains(r.err, tt.want) || strings.Count(r.err, "\n") != 1 {
			t.Errorf("%s: exit %d stderr %q; want exit 2 and %q", tt.name, r.code, r.err, tt.want)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s: took %v: it tried to connect before refusing", tt.name, d)
		}
		if strings.Contains(r.err, "s3cr3tv4lue") {
			t.Errorf("%s: the credential is in the error: %q", tt.name, r.err)
		}
	}
}

// TestE2EAllowlistRefusesBeforeConnecting points wharf at a listener that counts connections:
// an endpoint outside WHARF_ENDPOINT_ALLOWLIST is refused with none made.
func TestE2EAllowlistRefusesBeforeConnecting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	c := cli{env: []string{"WHARF_ENDPOINT_ALLOWLIST=s3.example.com,*.corp.example", "AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=y"}}
	r := c.run(t, "--endpoint", "http://"+ln.Addr().String(), "ls", "s3://bucket/")
	if r.code != 2 || !strings.Contains(r.err, "[WHARF_ENDPOINT_NOT_ALLOWED]") || !strings.Contains(r.err, "127.0.0.1") {
		t.Errorf("exit %d stderr %q; want exit 2 WHARF_ENDPOINT_NOT_ALLOWED naming the host", r.code, r.err)
	}
	r = c.run(t, "--format", "json", "--endpoint", "http://"+ln.Addr().String(), "ls", "s3://bucket/")
	var e struct{ Error, Code string }
	if err := json.Unmarshal([]byte(r.err), &e); err != nil || e.Code != "WHARF_ENDPOINT_NOT_ALLOWED" {
		t.Errorf("json error %q: %+v %v", r.err, e, err)
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("%d connections made before the refusal", n)
	}
}

// TestE2EInterrupt sends SIGINT while cp waits on standard input: it exits 130 with one line,
// and neither the local file nor a temporary file is left.
func TestE2EInterrupt(t *testing.T) {
	for _, dst := range []string{"local", "store"} {
		t.Run(dst, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "out.bin")
			if dst == "store" {
				target = "file://" + target
			}
			stdinR, stdinW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd := cli{}.command("cp", "-", target)
			cmd.Stdin, cmd.Stderr = stdinR, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			stdinR.Close()
			defer stdinW.Close()
			if _, err := stdinW.Write(make([]byte, 300<<10)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Fatalf("exit %d (%v), want 130; stderr %q", code, err, stderr.String())
			}
			if stderr.String() != "wharf: interrupted [WHARF_INTERRUPTED]\n" {
				t.Errorf("stderr %q", stderr.String())
			}
			var left []string
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				// The file store's lock file stays; its temporary files must not.
				if err == nil && !d.IsDir() && d.Name() != "lock" {
					left = append(left, p)
				}
				return nil
			})
			if len(left) != 0 {
				t.Errorf("left behind: %q", left)
			}
		})
	}
}
