package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

// onlyReader hides every method but Read, as a pipe or socket would.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestPutObjectCarriesIfNoneMatch(t *testing.T) {
	f, b := newFake(t, testConfig{})
	opts := &store.PutOptions{IfNoneMatch: true, Size: 5, ContentType: "text/plain",
		Metadata: map[string]string{"wharf-put-id": "abc"}}
	info, err := b.Put(context.Background(), "dir/k", onlyReader{strings.NewReader("hello")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	puts := f.requests("put")
	if len(puts) != 1 {
		t.Fatalf("%d PutObject requests, want 1", len(puts))
	}
	h := puts[0].header
	for name, want := range map[string]string{
		"If-None-Match": "*", "Content-Type": "text/plain", "X-Amz-Meta-Wharf-Put-Id": "abc",
		"X-Amz-Content-Sha256": "UNSIGNED-PAYLOAD", "Content-Length": "5",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if h.Get("If-Match") != "" {
		t.Errorf("If-Match sent on a create: %q", h.Get("If-Match"))
	}
	if info.ETag != "etag-put-1" || info.Size != 5 {
		t.Errorf("info = %+v", info)
	}
}

func TestPutUnknownSmallIsOnePut(t *testing.T) {
	f, b := newFake(t, testConfig{})
	_, err := b.Put(context.Background(), "k", onlyReader{strings.NewReader("abc")}, &store.PutOptions{Size: -1})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.requests("put")); n != 1 || len(f.requests("create")) != 0 {
		t.Fatalf("requests %+v, want one PutObject", f.reqs)
	}
	if got := f.requests("put")[0].size; got != 3 {
		t.Fatalf("body of %d bytes, want 3", got)
	}
}

func TestMultipartCarriesIfMatchOnComplete(t *testing.T) {
	f, b := newFake(t, testConfig{Options: Options{PartSize: MinPartSize, Concurrency: 2}})
	body := bytes.Repeat([]byte("x"), 2*MinPartSize+100)
	info, err := b.Put(context.Background(), "big", onlyReader{bytes.NewReader(body)},
		&store.PutOptions{IfMatch: "old-etag", Size: -1})
	if err != nil {
		t.Fatal(err)
	}
	parts := f.requests("part")
	if len(parts) != 3 {
		t.Fatalf("%d parts, want 3", len(parts))
	}
	sum := 0
	for _, p := range parts {
		sum += p.size
		if p.header.Get("If-Match") != "" {
			t.Errorf("If-Match on UploadPart")
		}
	}
	if sum != len(body) {
		t.Errorf("parts carried %d bytes, want %d", sum, len(body))
	}
	done := f.requests("complete")
	if len(done) != 1 || done[0].header.Get("If-Match") != `"old-etag"` {
		t.Fatalf("complete requests %d, If-Match %q", len(done), done[0].header.Get("If-Match"))
	}
	if len(f.requests("abort")) != 0 {
		t.Error("abort after a successful upload")
	}
	if info.ETag != "final-3" || info.Size != int64(len(body)) {
		t.Errorf("info = %+v", info)
	}
}

func TestMultipartCreateCarriesIfNoneMatchOnComplete(t *testing.T) {
	f, b := newFake(t, testConfig{})
	f.hook = func(w http.ResponseWriter, r *http.Request, kind string, n int) bool {
		if kind == "complete" {
			s3Error(w, 412, "PreconditionFailed")
			return true
		}
		return false
	}
	body := bytes.Repeat([]byte("y"), singlePutMax+1)
	_, err := b.Put(context.Background(), "big", bytes.NewReader(body), &store.PutOptions{IfNoneMatch: true, Size: int64(len(body))})
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("err = %v, want ErrPreconditionFailed", err)
	}
	if f.requests("head") != nil || f.requests("get") != nil {
		t.Error("a conditional multipart create pre-checked the key")
	}
	if h := f.requests("complete")[0].header.Get("If-None-Match"); h != "*" {
		t.Errorf("If-None-Match on complete = %q", h)
	}
	if len(f.requests("abort")) != 1 {
		t.Error("upload not aborted after the failed condition")
	}
	if driver.FaultOf(err) != driver.FaultNone {
		t.Errorf("fault %v leaves the multipart path", driver.FaultOf(err))
	}
}

func TestMultipartAbortsAfterPartFails(t *testing.T) {
	f, b := newFake(t, testConfig{Options: Options{PartSize: MinPartSize, Concurrency: 1}})
	f.hook = func(w http.ResponseWriter, r *http.Request, kind string, n int) bool {
		if kind == "part" && r.URL.Query().Get("partNumber") == "2" {
			s3Error(w, 403, "AccessDenied")
			return true
		}
		return false
	}
	body := bytes.Repeat([]byte("z"), 4*MinPartSize)
	_, err := b.Put(context.Background(), "big", onlyReader{bytes.NewReader(body)}, &driver.PutOptions{})
	if !errors.Is(err, store.ErrForbidden) {
		t.Fatalf("err = %v, want ErrForbidden", err)
	}
	if len(f.requests("abort")) != 1 || len(f.requests("complete")) != 0 {
		t.Fatalf("abort %d complete %d, want 1 and 0", len(f.requests("abort")), len(f.requests("complete")))
	}
	if n := len(f.requests("part")); n > 2 {
		t.Errorf("%d parts sent after part 2 failed with Concurrency 1", n)
	}
}

func TestMultipartPartRetriedAlone(t *testing.T) {
	f, b := newFake(t, testConfig{Options: Options{PartSize: MinPartSize}})
	f.hook = func(w http.ResponseWriter, r *http.Request, kind string, n int) bool {
		if kind == "part" && r.URL.Query().Get("partNumber") == "2" && n <= 2 {
			s3Error(w, 503, "SlowDown") // the first try of part 2 (n counts part requests)
			return true
		}
		return false
	}
	body := bytes.Repeat([]byte("r"), 3*MinPartSize)
	b.concurrency = 1
	if _, err := b.Put(context.Background(), "big", onlyReader{bytes.NewReader(body)}, &driver.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := len(f.requests("part")); n != 4 {
		t.Errorf("%d part requests, want 4 (3 parts + 1 retry)", n)
	}
	if n := len(f.requests("create")); n != 1 {
		t.Errorf("%d uploads created, want 1", n)
	}
}

func TestMultipartCancelAborts(t *testing.T) {
	f, b := newFake(t, testConfig{Options: Options{PartSize: MinPartSize, Concurrency: 1}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.hook = func(w http.ResponseWriter, r *http.Request, kind string, n int) bool {
		if kind == "part" && n == 2 {
			cancel()
		}
		return false
	}
	body := bytes.Repeat([]byte("c"), 5*MinPartSize)
	_, err := b.Put(ctx, "big", onlyReader{bytes.NewReader(body)}, &driver.PutOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(f.requests("abort")) != 1 || len(f.requests("complete")) != 0 {
		t.Fatalf("abort %d complete %d, want 1 and 0", len(f.requests("abort")), len(f.requests("complete")))
	}
}

func TestSDKRetriesOff(t *testing.T) {
	f, b := newFake(t, testConfig{})
	f.hook = func(w http.ResponseWriter, r *http.Request, kind string, n int) bool {
		s3Error(w, 500, "InternalError")
		return true
	}
	_, err := b.Get(context.Background(), "k", &driver.GetOptions{})
	var e *store.Error
	if !errors.As(err, &e) || e.Kind != store.ErrUnavailable || e.Fault != driver.FaultThrottled || e.Status != 500 {
		t.Fatalf("err = %#v", err)
	}
	if n := f.total(); n != 1 {
		t.Fatalf("%d requests on a 500, want exactly 1", n)
	}
}

func TestHeadMissingBucketOrKey(t *testing.T) {
	for _, bucketThere := range []bool{true, false} {
		f, b := newFake(t, testConfig{})
		f.hook = func(w http.ResponseWriter, r *http.Request, kind string, n int) bool {
			if kind == "head-bucket" && bucketThere {
				return false
			}
			w.WriteHeader(404)
			return true
		}
		_, err := b.Head(context.Background(), "k")
		want := store.ErrBucketMissing
		if bucketThere {
			want = store.ErrNotExist
		}
		if !errors.Is(err, want) {
			t.Errorf("bucket there %v: err = %v, want %v", bucketThere, err, want)
		}
	}
}

func TestGetRangeAndPin(t *testing.T) {
	f, b := newFake(t, testConfig{})
	f.hook = func(w http.ResponseWriter, r *http.Request, kind string, n int) bool {
		w.Header().Set("ETag", `"e1"`)
		w.Header().Set("Content-Range", "bytes 10-14/1234")
		w.Header().Set("X-Amz-Meta-Wharf-Sha256", "abc")
		w.WriteHeader(206)
		io.WriteString(w, "01234")
		return true
	}
	obj, err := b.Get(context.Background(), "k", &store.GetOptions{IfMatch: "e1", Offset: 10, Length: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	data, _ := io.ReadAll(obj)
	h := f.requests("get")[0].header
	if h.Get("Range") != "bytes=10-14" || h.Get("If-Match") != `"e1"` {
		t.Errorf("Range %q If-Match %q", h.Get("Range"), h.Get("If-Match"))
	}
	if obj.Info.Size != 1234 || obj.Info.ETag != "e1" || string(data) != "01234" || obj.Info.Metadata["wharf-sha256"] != "abc" {
		t.Errorf("info %+v data %q", obj.Info, data)
	}
}

func TestDeleteShape(t *testing.T) {
	f, b := newFake(t, testConfig{})
	if err := b.Delete(context.Background(), "k", &store.DeleteOptions{IfMatch: "e9"}); err != nil {
		t.Fatal(err)
	}
	if h := f.requests("delete")[0].header.Get("If-Match"); h != `"e9"` {
		t.Errorf("If-Match on delete = %q", h)
	}
	keys := make([]string, 2500)
	for i := range keys {
		keys[i] = "k" + strings.Repeat("x", i%7)
	}
	f.hook = func(w http.ResponseWriter, r *http.Request, kind string, n int) bool {
		if kind == "delete-many" {
			io.WriteString(w, `<DeleteResult></DeleteResult>`)
			return true
		}
		return false
	}
	if err := b.DeleteMany(context.Background(), keys); err != nil {
		t.Fatal(err)
	}
	if n := len(f.requests("delete-many")); n != 3 {
		t.Errorf("%d DeleteObjects requests for 2500 keys, want 3", n)
	}
}

func TestDescribeHasNoCredentials(t *testing.T) {
	_, b := newFake(t, testConfig{})
	d := b.Describe()
	if d.Scheme != "s3" || d.Location != "s3://bkt" || !strings.HasPrefix(d.Endpoint, "http://127.0.0.1:") {
		t.Errorf("describe = %+v", d)
	}
	if strings.Contains(d.Endpoint+d.Location, "fake-secret-value") {
		t.Error("secret in the description")
	}
}

func TestMultipartShortBodyIsNotCommitted(t *testing.T) {
	f, b := newFake(t, testConfig{Options: Options{PartSize: MinPartSize}})
	body := bytes.Repeat([]byte("s"), singlePutMax+10)
	_, err := b.Put(context.Background(), "big", onlyReader{bytes.NewReader(body)}, &store.PutOptions{Size: int64(len(body)) + 1})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want a short-body error", err)
	}
	if len(f.requests("complete")) != 0 || len(f.requests("abort")) != 1 {
		t.Fatal("a short body was committed or not aborted")
	}
}

func TestMakeBucketOwnedIsSuccess(t *testing.T) {
	f, b := newFake(t, testConfig{})
	f.hook = func(w http.ResponseWriter, r *http.Request, kind string, n int) bool {
		if n == 1 {
			s3Error(w, 409, "BucketAlreadyOwnedByYou")
		} else {
			s3Error(w, 409, "BucketAlreadyExists")
		}
		return true
	}
	if err := b.MakeBucket(context.Background()); err != nil {
		t.Fatalf("owned bucket: %v", err)
	}
	if err := b.MakeBucket(context.Background()); !errors.Is(err, store.ErrForbidden) {
		t.Fatalf("someone else's bucket: %v, want ErrForbidden", err)
	}
}

func TestR2Target(t *testing.T) {
	loc, err := store.ParseURL("r2://acct123/bkt/pre")
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig{}
	b, err := New(context.Background(), loc, &cfg.Options, cfg.common())
	if err != nil {
		t.Fatal(err)
	}
	d := b.Describe()
	if d.Scheme != "r2" || d.Location != "r2://acct123/bkt" || d.Endpoint != "https://acct123.r2.cloudflarestorage.com" || b.target.region != "auto" {
		t.Fatalf("describe %+v region %q", d, b.target.region)
	}
}

func TestEnvironmentEndpointIgnored(t *testing.T) {
	other := &fakeS3{}
	t.Setenv("AWS_ENDPOINT_URL", newServer(t, other))
	t.Setenv("AWS_ENDPOINT_URL_S3", newServer(t, other))
	f, b := newFake(t, testConfig{})
	if _, err := b.Head(context.Background(), "k"); err != nil {
		t.Fatal(err)
	}
	if other.total() != 0 || f.total() != 1 {
		t.Fatalf("the environment's endpoint got %d requests, the configured one %d", other.total(), f.total())
	}
}

// TestMultipartReadsFileInPlace: a body that is an io.ReaderAt of known size (a local file) is
// sent as sections of itself, no part read through Read into a buffer; a failed part is
// read again from the file and sent alone.
func TestMultipartReadsFileInPlace(t *testing.T) {
	f, b := newFake(t, testConfig{Options: Options{PartSize: MinPartSize, Concurrency: 2}})
	var failed atomic.Bool
	f.hook = func(w http.ResponseWriter, r *http.Request, kind string, n int) bool {
		if kind == "part" && r.URL.Query().Get("partNumber") == "2" && !failed.Swap(true) {
			s3Error(w, 503, "SlowDown") // part 2's first try only
			return true
		}
		return false
	}
	size := int64(4*MinPartSize + 7) // past singlePutMax: a multipart upload
	file, err := os.Create(filepath.Join(t.TempDir(), "body"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, err := file.Write(bytes.Repeat([]byte("f"), int(size))); err != nil {
		t.Fatal(err)
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	info, err := b.Put(context.Background(), "big", file, &store.PutOptions{Size: size})
	if err != nil || info.Size != size {
		t.Fatalf("put: %+v, %v", info, err)
	}
	var sizes []int
	for _, r := range f.requests("part") {
		sizes = append(sizes, r.size)
	}
	slices.Sort(sizes)
	if want := []int{7, MinPartSize, MinPartSize, MinPartSize, MinPartSize, MinPartSize}; !slices.Equal(sizes, want) {
		t.Errorf("part bodies of %v bytes, want %v (5 parts and part 2 again)", sizes, want)
	}
	if pos, _ := file.Seek(0, io.SeekCurrent); pos != 0 {
		t.Errorf("the file was read through Read (offset %d), not in place", pos)
	}
	if len(f.requests("complete")) != 1 {
		t.Error("not completed")
	}
}

// TestMultipartInPlaceShortFileIsNotCommitted: a file shorter than the size the put gave fails
// the part that reaches past its end, and the upload is aborted.
func TestMultipartInPlaceShortFileIsNotCommitted(t *testing.T) {
	f, b := newFake(t, testConfig{Options: Options{PartSize: MinPartSize, Concurrency: 1}})
	body := bytes.Repeat([]byte("s"), 4*MinPartSize)
	_, err := b.Put(context.Background(), "big", bytes.NewReader(body), &store.PutOptions{Size: int64(len(body)) + 1})
	if err == nil {
		t.Fatal("a short body was put")
	}
	if len(f.requests("complete")) != 0 || len(f.requests("abort")) != 1 {
		t.Fatalf("complete %d abort %d, want 0 and 1", len(f.requests("complete")), len(f.requests("abort")))
	}
}

// TestCopyReplacingPinsTheSource: a copy that gives a header replaces all of the source's
// attributes (REPLACE), so it reads the source first for what it does not give, and pins the
// copy to the version it read; a copy that gives nothing keeps them server-side, in one request.
func TestCopyReplacingPinsTheSource(t *testing.T) {
	f, b := newFake(t, testConfig{})
	f.hook = func(w http.ResponseWriter, r *http.Request, kind string, n int) bool {
		switch kind {
		case "head":
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Content-Type", "text/csv")
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("X-Amz-Meta-Origin", "src")
			w.Header().Set("X-Amz-Meta-Wharf-Put-Id", "the-source-write")
		case "copy":
			fmt.Fprint(w, `<CopyObjectResult><ETag>"c1"</ETag></CopyObjectResult>`)
		default:
			return false
		}
		return true
	}
	ctx := context.Background()
	if _, err := b.Copy(ctx, "src", "plain", &store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	copies := f.requests("copy")
	if len(copies) != 1 || len(f.requests("head")) != 1 { // the head after the copy, for its size
		t.Fatalf("a plain copy made %d copies and %d heads, want 1 and 1 (after it)", len(copies), len(f.requests("head")))
	}
	if h := copies[0].header; h.Get("X-Amz-Metadata-Directive") != "" || h.Get("X-Amz-Copy-Source-If-Match") != "" {
		t.Errorf("a plain copy sent directive %q, source pin %q; want neither", h.Get("X-Amz-Metadata-Directive"),
			h.Get("X-Amz-Copy-Source-If-Match"))
	}

	if _, err := b.Copy(ctx, "src", "replaced", &store.PutOptions{Headers: store.Headers{CacheControl: "no-store"}}); err != nil {
		t.Fatal(err)
	}
	copies = f.requests("copy")
	if len(copies) != 2 {
		t.Fatalf("%d copies, want 2", len(copies))
	}
	h := copies[1].header
	for name, want := range map[string]string{
		"X-Amz-Metadata-Directive": "REPLACE", "X-Amz-Copy-Source-If-Match": `"v1"`,
		"Content-Type": "text/csv", "Cache-Control": "no-store", "Content-Encoding": "",
		"X-Amz-Meta-Origin": "src", "X-Amz-Meta-Wharf-Put-Id": "",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("replacing copy: %s = %q, want %q", name, got, want)
		}
	}

	// The source replaced between the head and the copy: the pin fails, naming the source.
	f.hook = func(w http.ResponseWriter, r *http.Request, kind string, n int) bool {
		switch kind {
		case "head":
			w.Header().Set("ETag", `"v1"`)
		case "copy":
			s3Error(w, http.StatusPreconditionFailed, "PreconditionFailed")
		default:
			return false
		}
		return true
	}
	_, err := b.Copy(ctx, "src", "stale", &store.PutOptions{ContentType: "text/plain"})
	var se *store.Error
	if !errors.Is(err, store.ErrPreconditionFailed) || !errors.As(err, &se) || se.Key != "src" {
		t.Errorf("a replacing copy of a source replaced meanwhile: %v; want a failed precondition naming src", err)
	}
}
