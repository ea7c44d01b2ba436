package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wharfdata/wharf/internal/testenv"
)

// statJSON runs wharf stat --format json on url and decodes it.
func statJSON(t *testing.T, w func(args ...string) result, url string) (info struct {
	ContentType string            `json:"content_type"`
	Headers     map[string]string `json:"headers"`
	Metadata    map[string]string `json:"metadata"`
}) {
	t.Helper()
	r := w("stat", "--format", "json", url).must(t, 0)
	if err := json.Unmarshal([]byte(r.out), &info); err != nil {
		t.Fatalf("stat %s: %v in %q", url, err, r.out)
	}
	return info
}

// TestE2EMinIOUploadContentType: bytes whose name says no type — standard input, a file without
// a known extension, one object or a tree, sent in one request or in parts — are stored as
// application/octet-stream; a known extension gives its type. (Left unnamed, MinIO records
// application/octet-stream for a single put but binary/octet-stream for a multipart upload.)
func TestE2EMinIOUploadContentType(t *testing.T) {
	c, ep := minioCLI(t)
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	in := func(stdin string, args ...string) result {
		t.Helper()
		cc := c
		cc.stdin = stdin
		return cc.run(t, append(ep, args...)...)
	}
	bucket := "s3://" + randomBucket(t)
	w("mb", bucket).must(t, 0)
	src := t.TempDir()
	writeFiles(t, src, map[string]string{
		"small":           "abc",
		"big":             strings.Repeat("x", 17<<20), // over 16 MiB: a multipart upload
		"tree/blob":       "abc",
		"tree/data.json":  `{"a":1}`,
		"tree/large.blob": strings.Repeat("y", 17<<20),
	})
	in("abc", "cp", "-", bucket+"/stdin-small").must(t, 0)
	in(strings.Repeat("z", 17<<20), "cp", "-", bucket+"/stdin-large").must(t, 0) // over 16 MiB: in parts
	w("cp", filepath.Join(src, "small"), bucket+"/file-small").must(t, 0)
	w("cp", filepath.Join(src, "big"), bucket+"/file-large").must(t, 0)
	w("cp", "-r", "--part-size", "5MiB", filepath.Join(src, "tree"), bucket+"/tree").must(t, 0)
	for key, want := range map[string]string{
		"stdin-small": "application/octet-stream", "stdin-large": "application/octet-stream",
		"file-small": "application/octet-stream", "file-large": "application/octet-stream",
		"tree/blob": "application/octet-stream", "tree/large.blob": "application/octet-stream",
		"tree/data.json": "application/json",
	} {
		if got := statJSON(t, w, bucket+"/"+key).ContentType; got != want {
			t.Errorf("%s: content type %q, want %q", key, got, want)
		}
	}
}

// TestE2EMinIOCopyKeepsHeaders puts a gzip object with Cache-Control, Content-Disposition,
// Content-Encoding: gzip and Content-Language (through the SDK, as another tool would), then
// copies it with the binary every way it can go: to another bucket (one object, and a tree),
// within the bucket (server-side, plain and --if-absent), into a local file store and back,
// and through a plain directory. Where the destination can hold them the headers, content type
// and metadata arrive as written; the bytes arrive as stored everywhere (never decompressed).
func TestE2EMinIOCopyKeepsHeaders(t *testing.T) {
	srv := testenv.MinIO(t)
	c, _ := minioCLI(t)
	// The endpoint from the environment, not --endpoint: the flag would reach the file store too,
	// which has no such option.
	c.env = append(c.env, "AWS_ENDPOINT_URL_S3="+srv.Endpoint)
	w := func(args ...string) result { t.Helper(); return c.run(t, args...) }
	b1, b2 := randomBucket(t), randomBucket(t)
	w("mb", "s3://"+b1).must(t, 0)
	w("mb", "s3://"+b2).must(t, 0)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(strings.Repeat(`{"level":"info","msg":"hello"}`+"\n", 2000)))
	_ = zw.Close()
	body := gz.Bytes()

	api, ctx := s3Client(srv), context.Background()
	_, err := api.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(b1), Key: aws.String("logs/app.ndjson.gz"), Body: bytes.NewReader(body),
		ContentType:        aws.String("application/x-ndjson"),
		CacheControl:       aws.String("public, max-age=86400"),
		ContentDisposition: aws.String(`attachment; filename="app.ndjson.gz"`),
		ContentEncoding:    aws.String("gzip"),
		ContentLanguage:    aws.String("en-GB"),
		Metadata:           map[string]string{"origin": "sdk"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// wantKept checks with the SDK, not wharf, that key in bucket carries everything written.
	wantKept := func(bucket, key string) {
		t.Helper()
		h, err := api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Errorf("head %s/%s: %v", bucket, key, err)
			return
		}
		for name, pair := range map[string][2]string{
			"Content-Type":        {aws.ToString(h.ContentType), "application/x-ndjson"},
			"Cache-Control":       {aws.ToString(h.CacheControl), "public, max-age=86400"},
			"Content-Disposition": {aws.ToString(h.ContentDisposition), `attachment; filename="app.ndjson.gz"`},
			"Content-Encoding":    {aws.ToString(h.ContentEncoding), "gzip"},
			"Content-Language":    {aws.ToString(h.ContentLanguage), "en-GB"},
			"x-amz-meta-origin":   {h.Metadata["origin"], "sdk"},
		} {
			if pair[0] != pair[1] {
				t.Errorf("%s/%s: %s %q, want %q", bucket, key, name, pair[0], pair[1])
			}
		}
		if aws.ToInt64(h.ContentLength) != int64(len(body)) {
			t.Errorf("%s/%s: %d bytes, want the %d stored", bucket, key, aws.ToInt64(h.ContentLength), len(body))
		}
	}
	src := "s3://" + b1 + "/logs/app.ndjson.gz"

	// Another bucket: one object (a stream through wharf) and a tree (the parallel copier).
	w("cp", src, "s3://"+b2+"/one.gz").must(t, 0)
	wantKept(b2, "one.gz")
	w("cp", "-r", "s3://"+b1+"/logs/", "s3://"+b2+"/tree/").must(t, 0)
	wantKept(b2, "tree/app.ndjson.gz")
	// The same bucket: server-side, plain and conditional.
	w("cp", src, "s3://"+b1+"/same.gz").must(t, 0)
	wantKept(b1, "same.gz")
	w("cp", "--if-absent", src, "s3://"+b1+"/same-if-absent.gz").must(t, 0)
	wantKept(b1, "same-if-absent.gz")
	w("cp", "-r", "--if-absent", "s3://"+b1+"/logs/", "s3://"+b1+"/tree-if-absent/").must(t, 0)
	wantKept(b1, "tree-if-absent/app.ndjson.gz")

	// A local file store holds them: there and back, one object and a tree; stat shows them.
	lake := filepath.Join(t.TempDir(), "lake")
	w("mb", lake).must(t, 0)
	w("cp", src, filepath.Join(lake, "one.gz")).must(t, 0)
	w("cp", "-r", "s3://"+b1+"/logs/", filepath.Join(lake, "tree")+"/").must(t, 0)
	info := statJSON(t, w, filepath.Join(lake, "one.gz"))
	if info.Headers["content_encoding"] != "gzip" || info.Headers["content_language"] != "en-GB" ||
		info.ContentType != "application/x-ndjson" || info.Metadata["origin"] != "sdk" {
		t.Errorf("stat of the file store's copy: %+v", info)
	}
	if r := w("stat", filepath.Join(lake, "one.gz")).must(t, 0); !strings.Contains(r.out, "  Content-Encoding: gzip\n") ||
		!strings.Contains(r.out, "  Cache-Control: public, max-age=86400\n") {
		t.Errorf("stat does not show the headers:\n%s", r.out)
	}
	if got := readFile(t, filepath.Join(lake, "one.gz")); got != string(body) {
		t.Errorf("the file store's copy holds %d bytes, not the %d stored", len(got), len(body))
	}
	w("cp", filepath.Join(lake, "one.gz"), "s3://"+b2+"/back.gz").must(t, 0)
	wantKept(b2, "back.gz")
	w("cp", "-r", filepath.Join(lake, "tree")+"/", "s3://"+b2+"/back-tree/").must(t, 0)
	wantKept(b2, "back-tree/app.ndjson.gz")

	// A plain directory holds the bytes alone, exactly as stored.
	plain := t.TempDir()
	w("cp", src, plain+"/").must(t, 0)
	w("cp", "-r", "s3://"+b1+"/logs/", filepath.Join(plain, "tree")+"/").must(t, 0)
	for _, p := range []string{filepath.Join(plain, "app.ndjson.gz"), filepath.Join(plain, "tree", "app.ndjson.gz")} {
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, body) {
			t.Errorf("%s: %d bytes (%v), want the %d stored", p, len(got), err, len(body))
		}
	}
}
