package s3

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// startUpload starts a multipart upload at key with one part sent, as a process killed in the
// middle of an upload leaves it, and returns its id.
func startUpload(t *testing.T, b *Bucket, key string) string {
	t.Helper()
	ctx := context.Background()
	out, err := b.api.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b.bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.api.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b.bucket), Key: aws.String(key),
		UploadId: out.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader(strings.Repeat("x", MinPartSize)),
		ContentLength: aws.Int64(MinPartSize)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.UploadId)
}

// TestMinIOUploads: incomplete multipart uploads are listed with their keys, ids and start
// times, through the portable store (below its prefix), and aborting one removes it and
// leaves the others; aborting it again succeeds.
func TestMinIOUploads(t *testing.T) {
	b := openMinIO(t, testConfig{})
	ctx := context.Background()
	before := time.Now().Add(-time.Minute)
	ids := map[string]string{}
	for _, k := range []string{"raw/a.bin", "raw/b.bin", "other/c.bin"} {
		ids[k] = startUpload(t, b, k)
	}
	ids["raw/a.bin#2"] = startUpload(t, b, "raw/a.bin")

	ups, err := b.ListUploads(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 4 {
		t.Fatalf("unprefixed listing: %+v, want 4 uploads", ups)
	}
	for i, u := range ups {
		if u.ID == "" || u.Initiated.Before(before) || (i > 0 && ups[i-1].Key > u.Key) {
			t.Errorf("upload %d: %+v (want an id, a start time, key order)", i, u)
		}
	}

	// Through the portable store opened below raw/: the exact key lists both of a.bin's
	// uploads (MinIO lists by exact key, whatever happened since it started).
	st := store.New(b, nil).Sub("raw")
	got, err := st.ListUploads(ctx, "a.bin")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Key != "a.bin" || got[1].Key != "a.bin" {
		t.Fatalf("ListUploads(a.bin) below raw/: %+v, want a.bin's two uploads", got)
	}
	if err := st.AbortUpload(ctx, got[0]); err != nil {
		t.Fatal(err)
	}
	if err := st.AbortUpload(ctx, got[0]); err != nil {
		t.Errorf("aborting an upload already aborted: %v, want success", err)
	}
	left, err := b.ListUploads(ctx, "raw/a.bin")
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].ID != got[1].ID {
		t.Errorf("after aborting one of a.bin's uploads: %+v, want only %s", left, got[1].ID)
	}
	if other, err := b.ListUploads(ctx, "other/c.bin"); err != nil || len(other) != 1 {
		t.Errorf("the upload at another key: %+v, %v; want it untouched", other, err)
	}
	for _, u := range append(left, driverUpload("raw/b.bin", ids["raw/b.bin"]), driverUpload("other/c.bin", ids["other/c.bin"])) {
		if err := b.AbortUpload(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	if ups, err := b.ListUploads(ctx, ""); err != nil || len(ups) != 0 {
		t.Errorf("after aborting all: %+v, %v", ups, err)
	}
}

func driverUpload(key, id string) store.Upload { return store.Upload{Key: key, ID: id} }

// TestMinIOUploadsBucketMissing: listing the uploads of a bucket that does not exist is
// WHARF_BUCKET_MISSING naming the bucket, never an empty list.
func TestMinIOUploadsBucketMissing(t *testing.T) {
	srv := testenv.MinIO(t)
	b := openBucket(t, uniqueBucket(t), minioConfig(t, srv))
	_, err := b.ListUploads(context.Background(), "")
	if !errors.Is(err, store.ErrBucketMissing) || !strings.Contains(err.Error(), b.bucket) {
		t.Fatalf("ListUploads on a missing bucket: %v, want ErrBucketMissing naming %s", err, b.bucket)
	}
}
