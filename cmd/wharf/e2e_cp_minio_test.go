package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wharfdata/wharf/internal/testenv"
)

// s3Client is a plain SDK client on srv, for checks the CLI does not offer (open multipart
// uploads).
func s3Client(srv testenv.S3Server) *s3.Client {
	return s3.New(s3.Options{
		Region:       srv.Region,
		BaseEndpoint: aws.String(srv.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, ""),
	})
}

func TestE2EMinIOCopyTree(t *testing.T) {
	c, ep := minioCLI(t)
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	b1, b2 := "s3://"+randomBucket(t), "s3://"+randomBucket(t)
	w("mb", b1).must(t, 0)
	w("mb", b2).must(t, 0)
	src, down := t.TempDir(), t.TempDir()
	writeFiles(t, src, tree)
	writeFiles(t, src, map[string]string{"big.bin": strings.Repeat("0123456789abcdef", 1<<20)}) // 16 MiB
	tree := withFile(tree, "big.bin", strings.Repeat("0123456789abcdef", 1<<20))

	// Up (the 16 MiB file in 5 MiB parts), down (in parallel ranged parts), and back.
	w("cp", "-r", "--part-size", "5MiB", src, b1+"/data").must(t, 0)
	r := w("ls", "-r", b1)
	if got := lastFields(r.out); len(got) != 5 || got[0] != "data/a.txt" {
		t.Errorf("ls after cp -r up:\n%s", r.out)
	}
	w("cp", "-r", "--part-size", "5MiB", b1+"/data/", filepath.Join(down, "d")).must(t, 0)
	checkTreeOf(t, filepath.Join(down, "d"), tree)
	// Store to store: another bucket (streamed), the same bucket (server-side).
	w("cp", "-r", "-j", "2", b1+"/data", b2+"/copy/").must(t, 0)
	w("cp", "-r", b1+"/data/", b1+"/same").must(t, 0)
	w("cp", "-r", b2+"/copy", filepath.Join(down, "e")).must(t, 0)
	w("cp", "-r", b1+"/same", filepath.Join(down, "f")).must(t, 0)
	checkTreeOf(t, filepath.Join(down, "e"), tree)
	checkTreeOf(t, filepath.Join(down, "f"), tree)

	// --if-absent: refused, the object untouched; --dry-run: nothing written.
	writeFiles(t, src, map[string]string{"a.txt": "changed\n"})
	r = w("cp", "-r", "--if-absent", src, b1+"/data").must(t, 1)
	if !strings.Contains(r.err, "[WHARF_PRECONDITION_FAILED]") {
		t.Errorf("--if-absent: %q", r.err)
	}
	if r := w("cat", b1+"/data/a.txt"); r.out != "alpha\n" {
		t.Errorf("--if-absent replaced data/a.txt with %q", r.out)
	}
	r = w("cp", "-r", "--dry-run", "--format", "json", src, b1+"/dry/").must(t, 0)
	if n := strings.Count(r.out, `"dry_run":true`); n != 5 {
		t.Errorf("dry run listed %d copies:\n%s", n, r.out)
	}
	if r := w("ls", "-r", b1+"/dry/"); r.out != "" {
		t.Errorf("dry run wrote:\n%s", r.out)
	}

	// rm -r with batched deletes.
	r = w("rm", "-r", "--format", "json", b1+"/same").must(t, 0)
	if !strings.Contains(r.out, `"removed":5`) {
		t.Errorf("rm -r said %q", r.out)
	}
	if r := w("ls", "-r", b1+"/same/"); r.out != "" {
		t.Errorf("rm -r left:\n%s", r.out)
	}
}

func withFile(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range m {
		out[a] = b
	}
	return out
}

func checkTreeOf(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := readFile(t, filepath.Join(dir, filepath.FromSlash(k))); got != v {
			t.Errorf("%s/%s: %d bytes, want %d", dir, k, len(got), len(v))
		}
	}
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	if n != len(want) {
		t.Errorf("%s holds %d files, want %d (temporary files left?)", dir, n, len(want))
	}
}

func TestE2EMinIOCopyBadInput(t *testing.T) {
	c, ep := minioCLI(t)
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	src := t.TempDir()
	writeFiles(t, src, tree)
	missing := randomBucket(t)
	for _, argv := range [][]string{
		{"cp", "-r", src, "s3://" + missing + "/x/"},
		{"cp", filepath.Join(src, "a.txt"), "s3://" + missing + "/x/"},
		{"cp", "-r", "s3://" + missing + "/x/", t.TempDir()},
		{"rm", "-r", "s3://" + missing + "/x/"},
	} {
		r := w(argv...)
		if r.code != 1 || !strings.Contains(r.err, "[WHARF_BUCKET_MISSING]") || !strings.Contains(r.err, missing) {
			t.Errorf("wharf %v: exit %d %q; want 1, WHARF_BUCKET_MISSING naming the bucket", argv, r.code, r.err)
		}
	}
	bucket := "s3://" + randomBucket(t)
	w("mb", bucket).must(t, 0)
	r := w("cp", filepath.Join(src, "nope.txt"), bucket+"/").must(t, 1)
	if !strings.Contains(r.err, filepath.Join(src, "nope.txt")) || !strings.Contains(r.err, "[WHARF_NOT_FOUND]") {
		t.Errorf("missing local file: %q", r.err)
	}
	r = w("cp", "-r", bucket+"/no/such/prefix", t.TempDir()).must(t, 1)
	if !strings.Contains(r.err, bucket+"/no/such/prefix") || !strings.Contains(r.err, "[WHARF_NOT_FOUND]") {
		t.Errorf("missing prefix: %q", r.err)
	}
}

// TestE2EMinIOInterruptMultipart sends SIGINT to the real binary while it uploads a named pipe
// in 5 MiB parts: it exits 130, MinIO has no multipart upload open and nothing at the key.
func TestE2EMinIOInterruptMultipart(t *testing.T) {
	srv := testenv.MinIO(t)
	c, ep := minioCLI(t)
	name := randomBucket(t)
	c.run(t, append(ep, "mb", "s3://"+name)...).must(t, 0)
	fifo := filepath.Join(t.TempDir(), "slow.bin")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cmd := c.command(append(ep, "cp", "--part-size", "5MiB", fifo, "s3://"+name+"/big.bin")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pipe := openWriter(t, fifo)
	defer pipe.Close()
	_ = pipe.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := pipe.Write(bytes.Repeat([]byte("x"), 12<<20)); err != nil {
		t.Fatalf("feeding wharf: %v (stderr %q)", err, stderr.String())
	}
	api, ctx := s3Client(srv), context.Background()
	waitFor(t, "a multipart upload to open", func() bool { return openUploads(t, api, name) > 0 })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee interface{ ExitCode() int }
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), "[WHARF_INTERRUPTED]") {
		t.Fatalf("after SIGINT: %v, stderr %q; want exit 130, WHARF_INTERRUPTED", err, stderr.String())
	}
	if n := openUploads(t, api, name); n != 0 {
		t.Errorf("%d multipart uploads left open", n)
	}
	if _, err := api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(name), Key: aws.String("big.bin")}); err == nil {
		t.Error("an object was left at the key")
	}
}

// openWriter opens the write end of fifo once wharf has opened its read end, without ever
// blocking the test for good.
func openWriter(t *testing.T, fifo string) *os.File {
	t.Helper()
	var f *os.File
	waitFor(t, "wharf to open the pipe", func() bool {
		var err error
		f, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		return err == nil
	})
	return f
}

func openUploads(t *testing.T, api *s3.Client, bucket string) int {
	t.Helper()
	out, err := api.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Uploads)
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestE2EContentionS3(t *testing.T) {
	servers := map[string]func(testing.TB) testenv.S3Server{"minio": testenv.MinIO, "seaweedfs": testenv.SeaweedFS}
	for name, srv := range servers {
		t.Run(name, func(t *testing.T) {
			s := srv(t)
			c := cli{env: []string{"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey, "AWS_REGION=" + s.Region}}
			bucket := "s3://" + randomBucket(t)
			c.run(t, "--endpoint", s.Endpoint, "mb", bucket).must(t, 0)
			r := c.run(t, "--endpoint", s.Endpoint, "probe", "--contention", "4", "--rounds", "2", "--format", "json", bucket)
			var res struct {
				SafeForLeases bool `json:"safe_for_leases"`
				Checks        map[string]struct{ Verdict, Evidence string }
			}
			if err := json.Unmarshal([]byte(r.out), &res); err != nil || len(res.Checks) != 4 {
				t.Fatalf("contention on %s: exit %d %q %q %v", s.Name, r.code, r.out, r.err, err)
			}
			t.Logf("%s: safe_for_leases=%v %+v", s.Name, res.SafeForLeases, res.Checks)
			if (r.code == 0) != res.SafeForLeases {
				t.Errorf("exit %d but safe_for_leases %v", r.code, res.SafeForLeases)
			}
			if s.Name == "minio" && (!res.SafeForLeases || res.Checks["stale_delete_refused"].Verdict != "fail") {
				t.Errorf("MinIO: want safe for leases and a stale delete not refused (as the plain probe finds): %+v", res)
			}
		})
	}
}
