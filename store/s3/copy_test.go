package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// inParts makes every copy of more than 8 MiB a multipart copy of 5 MiB parts, for the test.
func inParts(t *testing.T) {
	oldMax, oldPart := copyMax, copyPartSize
	copyMax, copyPartSize = 8<<20, MinPartSize
	t.Cleanup(func() { copyMax, copyPartSize = oldMax, oldPart })
}

func TestMinIOCopyInParts(t *testing.T) {
	inParts(t)
	testCopyInParts(t, openMinIO(t, testConfig{}))
}

func TestSeaweedFSCopyInParts(t *testing.T) {
	inParts(t)
	srv := testenv.SeaweedFS(t)
	b := openBucket(t, uniqueBucket(t), minioConfig(t, srv))
	if err := b.MakeBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeBucket(t, b) })
	testCopyInParts(t, b)
}

// testCopyInParts copies a 13 MiB object as three UploadPartCopy parts: the bytes, content
// type, standard headers and metadata arrive whole (or what the copy gives replaces the
// source's, field by field); a condition
// on the destination holds; a source that changed since the copy began fails it naming the
// source; no upload is left open.
func testCopyInParts(t *testing.T, b *Bucket) {
	ctx := context.Background()
	body := randomBytes(t, 13<<20+4321)
	want := sha256.Sum256(body)
	size := int64(len(body))
	src := "dir/source with space.bin"
	headers := store.Headers{CacheControl: "max-age=60", ContentDisposition: "inline",
		ContentEncoding: "identity", ContentLanguage: "en"}
	if _, err := b.Put(ctx, src, bytes.NewReader(body), &store.PutOptions{Size: size,
		ContentType: "application/x-test", Headers: headers, Metadata: map[string]string{"wharf-range": "1-9"}}); err != nil {
		t.Fatal(err)
	}

	info, err := b.Copy(ctx, src, "copy/kept", &store.PutOptions{Size: size})
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != size || !strings.HasSuffix(info.ETag, "-3") {
		t.Errorf("copy info %+v: want %d bytes in 3 parts", info, size)
	}
	data, got := readAll(t, b, "copy/kept", nil)
	if sha256.Sum256(data) != want {
		t.Fatalf("copied bytes differ (%d bytes)", len(data))
	}
	if got.ContentType != "application/x-test" || got.Headers != headers || got.Metadata["wharf-range"] != "1-9" {
		t.Errorf("content type %q, headers %+v, metadata %v: want the source's", got.ContentType, got.Headers, got.Metadata)
	}

	if _, err := b.Copy(ctx, src, "copy/replaced", &store.PutOptions{Size: size,
		Metadata: map[string]string{"wharf-node": "n1"}}); err != nil {
		t.Fatal(err)
	}
	if _, got := readAll(t, b, "copy/replaced", nil); got.Metadata["wharf-node"] != "n1" || got.Metadata["wharf-range"] != "" ||
		got.ContentType != "application/x-test" || got.Headers != headers {
		t.Errorf("content type %q, headers %+v, metadata %v: want the source's but for the metadata given",
			got.ContentType, got.Headers, got.Metadata)
	}
	given := store.Headers{CacheControl: "no-cache"}
	if _, err := b.Copy(ctx, src, "copy/headers", &store.PutOptions{Size: size, Headers: given}); err != nil {
		t.Fatal(err)
	}
	if _, got := readAll(t, b, "copy/headers", nil); got.Headers != given || got.ContentType != "application/x-test" {
		t.Errorf("content type %q, headers %+v: want the source's type and only the headers given", got.ContentType, got.Headers)
	}

	_, err = b.Copy(ctx, src, "copy/kept", &store.PutOptions{Size: size, IfNoneMatch: true})
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Errorf("copy in parts onto an existing key with IfNoneMatch: %v", err)
	}

	// The source as it was when a copy began, then replaced: the parts refuse it.
	stale, err := b.Head(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, src, bytes.NewReader(body[:9<<20]), &store.PutOptions{Size: 9 << 20}); err != nil {
		t.Fatal(err)
	}
	u, err := b.startUpload(ctx, "copy/stale", &store.PutOptions{}, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = u.copyParts(ctx, src, stale)
	u.Abort(ctx)
	var se *store.Error
	if !errors.Is(err, store.ErrPreconditionFailed) || !errors.As(err, &se) || se.Key != src {
		t.Errorf("a part copy of a replaced source: %v; want a failed precondition naming %q", err, src)
	}

	if n := openUploads(t, b); n != 0 {
		t.Errorf("%d uploads left open", n)
	}
	if _, err := b.Head(ctx, "copy/stale"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("head of the abandoned copy: %v", err)
	}
}

func TestTooLargeToCopy(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&smithy.GenericAPIError{Code: "InvalidRequest", Message: "The specified copy source is larger than the maximum allowable size for a copy source: 5368709120"}, true},
		{&smithy.GenericAPIError{Code: "EntityTooLarge", Message: "Your proposed upload exceeds the maximum allowed size"}, true},
		{&smithy.GenericAPIError{Code: "InvalidRequest", Message: "The specified copy range is invalid"}, false},
		{&smithy.GenericAPIError{Code: "NoSuchKey"}, false},
		{errors.New("connection reset"), false},
	} {
		if got := tooLargeToCopy(tc.err); got != tc.want {
			t.Errorf("tooLargeToCopy(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	if got := copyPartSizeFor(5 << 40); got*maxParts < 5<<40 || got%(1<<20) != 0 {
		t.Errorf("part size for 5 TiB: %d (×%d parts is short, or not whole MiB)", got, maxParts)
	}
	if got := copyPartSizeFor(6 << 30); got != copyPartSize {
		t.Errorf("part size for 6 GiB: %d, want %d", got, copyPartSize)
	}
}
