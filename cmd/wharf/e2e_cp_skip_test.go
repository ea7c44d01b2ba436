package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wharfdata/wharf/internal/testenv"
)

// putRaw writes objects straight through the S3 API, as another tool would: keys wharf
// itself refuses to write.
func putRaw(t *testing.T, srv testenv.S3Server, bucket string, objects map[string]string) {
	t.Helper()
	api := s3Client(srv)
	for k, v := range objects {
		_, err := api.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k), Body: strings.NewReader(v)})
		if err != nil {
			t.Fatalf("put %q: %v", k, err)
		}
	}
}

// listRewriter is a reverse proxy in front of an S3 server that renames keys in listings: a
// bucket on AWS can hold keys that MinIO refuses to store ("a/../b", "a//b"), and this is how
// a test lists them. Signed requests pass unchanged (the Host header is the proxy's, which
// the client signed).
func listRewriter(t *testing.T, endpoint string, rename map[string]string) string {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
		},
		ModifyResponse: func(resp *http.Response) error {
			if resp.Request.Method != http.MethodGet || !resp.Request.URL.Query().Has("list-type") {
				return nil
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			for from, to := range rename {
				b = bytes.ReplaceAll(b, []byte("<Key>"+from+"</Key>"), []byte("<Key>"+to+"</Key>"))
			}
			resp.Body = io.NopCloser(bytes.NewReader(b))
			resp.ContentLength = int64(len(b))
			resp.Header.Del("Content-Length")
			return nil
		},
	}
	s := httptest.NewServer(rp)
	t.Cleanup(s.Close)
	return s.URL
}

// filesUnder lists the files below dir, relative, sorted.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

// checkNamed fails t unless stderr has a line naming each of what with its code, and no line
// without a code.
func checkNamed(t *testing.T, stderr string, named map[string]string) {
	t.Helper()
	for what, code := range named {
		found := false
		for line := range strings.SplitSeq(stderr, "\n") {
			if strings.Contains(line, what) && strings.HasSuffix(line, "["+code+"]") {
				found = true
			}
		}
		if !found {
			t.Errorf("stderr names no %q with [%s]:\n%s", what, code, stderr)
		}
	}
	for line := range strings.SplitSeq(strings.TrimSpace(stderr), "\n") {
		if !strings.HasSuffix(line, "]") || !strings.Contains(line, "[WHARF_") {
			t.Errorf("a line without a code: %q", line)
		}
	}
}

// TestE2EMinIOCopySkipsOnlyWhatItSays: a recursive download passes over, naming each with
// its code, every key that cannot be a local file (a ".." or empty segment, a non-empty key
// ending in '/', a key that another key needs as a directory), copies the rest, and exits 1;
// a zero-byte directory marker is the only key skipped silently.
func TestE2EMinIOCopySkipsOnlyWhatItSays(t *testing.T) {
	c, _ := minioCLI(t)
	srv := testenv.MinIO(t)
	name := randomBucket(t)
	bucket := "s3://" + name
	c.run(t, "--endpoint", srv.Endpoint, "mb", bucket).must(t, 0)
	putRaw(t, srv, name, map[string]string{
		"k/ok.txt":          "ok\n",
		"k/sub/deep.txt":    "deep\n",
		"k/marker/":         "",
		"k/data-slash/":     "bytes under a key ending in a slash\n",
		"k/DOTDOT.txt":      "would land outside its directory\n",
		"k/DSLASH.txt":      "an empty segment\n",
		"k/CLASH":           "a file where a directory is needed\n",
		"k/clash/inner.txt": "inner\n",
	})
	// MinIO refuses these keys, and cannot hold both k/clash and k/clash/inner.txt: the
	// listing is made to show them.
	ep := listRewriter(t, srv.Endpoint, map[string]string{
		"k/DOTDOT.txt": "k/a/../dotdot.txt",
		"k/DSLASH.txt": "k/x//dslash.txt",
		"k/CLASH":      "k/clash",
	})
	w := func(args ...string) result {
		t.Helper()
		return c.run(t, append([]string{"--endpoint", ep}, args...)...)
	}
	refused := map[string]string{
		"skipped " + bucket + "/k/a/../dotdot.txt:": "WHARF_KEY_INVALID",
		"skipped " + bucket + "/k/x//dslash.txt:":   "WHARF_KEY_INVALID",
		"skipped " + bucket + "/k/data-slash/:":     "WHARF_KEY_INVALID",
		"skipped " + bucket + "/k/clash:":           "WHARF_KEY_INVALID", // not k/clash/inner.txt
		"4 passed over":                             "WHARF_COPY_INCOMPLETE",
	}

	r := w("cp", "-r", "--dry-run", bucket+"/k/", t.TempDir()).must(t, 1)
	checkNamed(t, r.err, refused)

	down := filepath.Join(t.TempDir(), "down")
	r = w("cp", "-r", bucket+"/k/", down).must(t, 1)
	checkNamed(t, r.err, refused)
	if strings.Contains(r.err, "marker") {
		t.Errorf("the zero-byte directory marker was named:\n%s", r.err)
	}
	want := []string{"clash/inner.txt", "ok.txt", "sub/deep.txt"}
	if got := filesUnder(t, down); !slices.Equal(got, want) {
		t.Errorf("downloaded %q, want %q", got, want)
	}
	for _, f := range want {
		if !strings.Contains(r.out, "copied "+bucket+"/k/"+f+" -> "+filepath.Join(down, f)+" (") {
			t.Errorf("stdout does not name the copy of %s:\n%s", f, r.out)
		}
	}
}

// TestE2EMinIOCopyLocalTreeSkips: a recursive upload names each broken symbolic link (target
// missing, or a loop) and special file it passes over, with a code, copies the rest and exits
// 1; a loop given as the one file to copy is an error with a code.
func TestE2EMinIOCopyLocalTreeSkips(t *testing.T) {
	c, ep := minioCLI(t)
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	bucket := "s3://" + randomBucket(t)
	w("mb", bucket).must(t, 0)
	src := t.TempDir()
	writeFiles(t, src, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	for _, l := range [][2]string{{"nowhere", "broken"}, {"loop2", "loop1"}, {"loop1", "loop2"}, {"../a.txt", "sub/good-link"}} {
		if err := os.Symlink(l[0], filepath.Join(src, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(src, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}

	r := w("cp", "-r", src, bucket+"/up/").must(t, 1)
	checkNamed(t, r.err, map[string]string{
		"skipped " + filepath.Join(src, "broken") + ":": "WHARF_LINK_BROKEN",
		"skipped " + filepath.Join(src, "loop1") + ":":  "WHARF_LINK_BROKEN",
		"skipped " + filepath.Join(src, "loop2") + ":":  "WHARF_LINK_BROKEN",
		"skipped " + filepath.Join(src, "pipe") + ":":   "WHARF_SPECIAL_FILE",
		"4 passed over": "WHARF_COPY_INCOMPLETE",
	})
	got := lastFields(w("ls", "-r", bucket+"/up/").must(t, 0).out)
	if want := []string{"up/a.txt", "up/sub/b.txt", "up/sub/good-link"}; !slices.Equal(got, want) {
		t.Errorf("uploaded %q, want %q", got, want)
	}

	r = w("cp", filepath.Join(src, "loop1"), bucket+"/one").must(t, 1)
	checkNamed(t, r.err, map[string]string{filepath.Join(src, "loop1"): "WHARF_LINK_BROKEN"})
	r = w("cp", filepath.Join(src, "broken"), bucket+"/one").must(t, 1)
	checkNamed(t, r.err, map[string]string{filepath.Join(src, "broken"): "WHARF_LINK_BROKEN"})
}

// TestE2EMinIOAwkwardKeyBytes: a tab is a key byte like any other: a key holding one is
// downloaded to a file of that very name, and can be copied, read and removed on its own. A
// backslash (a legal file-name byte on Linux) is read and downloaded the same way, but wharf
// never writes or deletes such a key: Azure and SeaweedFS take it for '/', so an rm of
// "k/back\slash.txt" there would remove "k/back/slash.txt".
func TestE2EMinIOAwkwardKeyBytes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a backslash separates path names on Windows")
	}
	c, ep := minioCLI(t)
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	srv := testenv.MinIO(t)
	name := randomBucket(t)
	bucket := "s3://" + name
	w("mb", bucket).must(t, 0)
	backslash := `k/back\slash.txt`
	objects := map[string]string{backslash: "backslash\n", "k/tab\there.txt": "tab\n", "k/plain.txt": "plain\n"}
	putRaw(t, srv, name, objects)
	down := t.TempDir()
	w("cp", "-r", bucket+"/k/", down).must(t, 0)
	for k, v := range objects {
		if got := readFile(t, filepath.Join(down, strings.TrimPrefix(k, "k/"))); got != v {
			t.Errorf("%q downloaded as %q", k, got)
		}
		if r := w("cat", bucket+"/"+k).must(t, 0); r.out != v {
			t.Errorf("cat %q = %q", k, r.out)
		}
		w("cp", bucket+"/"+k, filepath.Join(down, "one")).must(t, 0)
		if k == backslash {
			for _, args := range [][]string{{"rm", bucket + "/" + k}, {"cp", filepath.Join(down, "one"), bucket + "/" + k}} {
				if r := w(args...); r.code != 2 || !strings.Contains(r.err, "[WHARF_KEY_INVALID]") || !strings.Contains(r.err, "backslash") {
					t.Errorf("wharf %v: exit %d %q, want WHARF_KEY_INVALID naming the backslash", args, r.code, r.err)
				}
			}
			continue
		}
		w("rm", bucket+"/"+k).must(t, 0)
	}
	if r := w("cat", bucket+"/"+backslash).must(t, 0); r.out != "backslash\n" {
		t.Errorf("the refused rm removed %q: %q", backslash, r.out)
	}
}
