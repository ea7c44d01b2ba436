package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// cp --content-type and the header flags through the binary on MinIO: an upload, a copy within
// the bucket and one from standard input carry exactly the values given, each over the
// source's, and keep the source's other headers; a local destination refuses them (exit 2).
func TestE2EMinIOCopySetsContentTypeAndHeaders(t *testing.T) {
	c, ep := minioCLI(t)
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	bucket := "s3://" + randomBucket(t)
	w("mb", bucket).must(t, 0)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"page.html": "<p>hi</p>"})
	type attrs struct {
		ContentType string `json:"content_type"`
		Headers     struct {
			CacheControl    string `json:"cache_control"`
			ContentEncoding string `json:"content_encoding"`
		}
	}
	stat := func(key string) attrs {
		t.Helper()
		var a attrs
		r := w("stat", "--format", "json", bucket+"/"+key).must(t, 0)
		if err := json.Unmarshal([]byte(r.out), &a); err != nil {
			t.Fatalf("stat %s: %q: %v", key, r.out, err)
		}
		return a
	}

	w("cp", "--cache-control", "max-age=60", "--content-encoding", "identity", filepath.Join(dir, "page.html"), bucket+"/a.html").must(t, 0)
	if a := stat("a.html"); a.ContentType != "text/html; charset=utf-8" || a.Headers.CacheControl != "max-age=60" || a.Headers.ContentEncoding != "identity" {
		t.Errorf("upload with --cache-control: %+v", a)
	}
	w("cp", "--content-type", "text/plain", "--cache-control", "no-cache", bucket+"/a.html", bucket+"/b.html").must(t, 0)
	if a := stat("b.html"); a.ContentType != "text/plain" || a.Headers.CacheControl != "no-cache" || a.Headers.ContentEncoding != "identity" {
		t.Errorf("copy within the bucket: %+v; want the type and cache-control given, the encoding kept", a)
	}
	if got := w("cat", bucket+"/b.html").must(t, 0).out; got != "<p>hi</p>" {
		t.Errorf("b.html holds %q", got)
	}
	c.stdin = "{}"
	w("cp", "--content-type", "application/json", "-", bucket+"/c.json").must(t, 0)
	c.stdin = ""
	if a := stat("c.json"); a.ContentType != "application/json" {
		t.Errorf("from standard input: %+v", a)
	}
	if r := w("cp", "--content-type", "text/plain", bucket+"/a.html", filepath.Join(dir, "x.html")); r.code != 2 || !strings.Contains(r.err, "not a store") {
		t.Errorf("--content-type to a local file: exit %d, stderr %q", r.code, r.err)
	}
}
