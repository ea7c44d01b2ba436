package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wharfdata/wharf/internal/testenv"
)

// TestE2ECopyKeepsKeysEndingInSlash: objects whose keys end in '/' (a console's directory
// marker, an object another tool wrote there) are copied between stores as they are, by cp -r
// and by sync; a copy that makes files skips the empty marker and passes over the one with
// bytes, naming it (WHARF_COPY_INCOMPLETE), as no file name ends in '/'.
func TestE2ECopyKeepsKeysEndingInSlash(t *testing.T) {
	c, ep := minioCLI(t)
	srv := testenv.MinIO(t)
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	src, dst := randomBucket(t), randomBucket(t)
	w("mb", "s3://"+src).must(t, 0)
	w("mb", "s3://"+dst).must(t, 0)
	api := s3Client(srv)
	for key, body := range map[string]string{"in/a.txt": "a", "in/dir/": "", "in/odd/": "bytes under a slash"} {
		if _, err := api.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(src), Key: aws.String(key),
			Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(bucket, prefix string) []string {
		t.Helper()
		out, err := api.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
		if err != nil {
			t.Fatal(err)
		}
		var ks []string
		for _, o := range out.Contents {
			ks = append(ks, strings.TrimPrefix(aws.ToString(o.Key), prefix))
		}
		slices.Sort(ks)
		return ks
	}
	want := []string{"a.txt", "dir/", "odd/"}

	w("cp", "-r", "s3://"+src+"/in/", "s3://"+dst+"/cp/").must(t, 0)
	if got := keys(dst, "cp/"); !slices.Equal(got, want) {
		t.Errorf("cp -r between buckets: %q, want %q", got, want)
	}
	w("sync", "s3://"+src+"/in/", "s3://"+dst+"/sync/").must(t, 0)
	if got := keys(dst, "sync/"); !slices.Equal(got, want) {
		t.Errorf("sync between buckets: %q, want %q", got, want)
	}
	got, err := api.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(dst), Key: aws.String("cp/odd/")})
	if err != nil {
		t.Fatal(err)
	}
	got.Body.Close()
	if aws.ToInt64(got.ContentLength) != int64(len("bytes under a slash")) {
		t.Errorf("cp/odd/ holds %d bytes", aws.ToInt64(got.ContentLength))
	}

	local := t.TempDir()
	r := w("cp", "-r", "s3://"+src+"/in/", local+"/")
	if r.code != 1 || !strings.Contains(r.err, "WHARF_COPY_INCOMPLETE") || !strings.Contains(r.err, "in/odd/") || strings.Contains(r.err, "in/dir/") {
		t.Errorf("cp -r to a directory: exit %d, stderr %q; want 1 passing over in/odd/ alone", r.code, r.err)
	}
	if _, err := os.Stat(filepath.Join(local, "a.txt")); err != nil {
		t.Errorf("a.txt not downloaded: %v", err)
	}
}
