package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/internal/testenv"
)

// TestE2EMinIOUploadLocalFileChanged: a local file that shrinks or grows while it is uploaded
// is reported as a local change naming the file (WHARF_LOCAL_FILE_CHANGED), never as the
// store being unavailable; no part is sent twice, nothing is committed, nothing is left.
//
// A proxy holds the first four parts of a 30 MiB upload in 5 MiB parts for two seconds; the
// file is changed as soon as the first part arrives, so parts 5 and 6, read only once one of
// the first four is through, see the change whatever the timing.
func TestE2EMinIOUploadLocalFileChanged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(path string) error
	}{
		{"shrinks", func(path string) error { return os.Truncate(path, 1<<20) }},
		{"grows", func(path string) error {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			_, err = f.Write(bytes.Repeat([]byte("x"), 1<<20))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ep := minioCLI(t)
			srv := testenv.MinIO(t)
			name := randomBucket(t)
			c.run(t, append(ep, "mb", "s3://"+name)...).must(t, 0)
			proxy, via := testenv.FaultProxy(t, srv)
			proxy.Inject(faultproxy.Rule{Method: "PUT", Query: "partNumber=", Times: 4, Fault: faultproxy.Stall, Delay: 2 * time.Second})

			path := filepath.Join(t.TempDir(), "growing.bin")
			body := make([]byte, 30<<20)
			_, _ = rand.Read(body)
			if err := os.WriteFile(path, body, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := c.command("--endpoint", via.Endpoint, "cp", "--part-size", "5MiB", path, "s3://"+name+"/big.bin")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if cmd.ProcessState == nil { // the test failed before it waited
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
				}
			})
			waitFor(t, "the first part", func() bool { return proxy.Count("PUT", "big.bin") > 0 })
			if err := tc.change(path); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()

			msg := strings.TrimSpace(stderr.String())
			if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.HasSuffix(msg, "[WHARF_LOCAL_FILE_CHANGED]") || !strings.Contains(msg, path) {
				t.Errorf("exit %d, stderr %q; want 1, WHARF_LOCAL_FILE_CHANGED naming %s", code, msg, path)
			}
			parts := map[string]int{}
			for _, r := range proxy.Requests() {
				q, _ := url.ParseQuery(r.RawQuery)
				switch {
				case r.Method == "PUT" && q.Has("partNumber"):
					if parts[q.Get("partNumber")]++; parts[q.Get("partNumber")] > 1 {
						t.Errorf("part %s was sent again", q.Get("partNumber"))
					}
				case r.Method == "POST" && q.Has("uploadId"):
					t.Error("the upload was committed")
				}
			}
			api := s3Client(srv)
			if n := openUploads(t, api, name); n != 0 {
				t.Errorf("%d multipart uploads left open", n)
			}
			if _, err := api.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(name), Key: aws.String("big.bin")}); err == nil {
				t.Error("an object was left at the key")
			}
		})
	}
}
