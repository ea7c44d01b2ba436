package gcs

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

// TestFakeGCSReadAPIs runs the read paths through both of the SDK's read APIs: JSON, which a
// Bucket uses on an emulator, and XML, which it uses on Cloud Storage (fake-gcs-server serves
// it here because the test server's -public-host is its own address). Each must give the
// same answers: content, metadata, content type, generation, ranges, an empty read at the
// end, pins, a missing key and a missing bucket.
func TestFakeGCSReadAPIs(t *testing.T) {
	srv := testenv.FakeGCS(t)
	for _, xml := range []bool{false, true} {
		name := map[bool]string{false: "json", true: "xml"}[xml]
		t.Run(name, func(t *testing.T) {
			cfg := emulatorConfig(srv)
			tg := target{endpoint: srv.Endpoint, emulator: true, xmlReads: xml}
			open := func(bucket string) *Bucket {
				loc, _ := store.ParseURL("gs://" + bucket)
				b, err := newBucket(context.Background(), loc, &cfg.Options, cfg.common(), tg)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { b.Close() })
				return b
			}
			b := open(uniqueBucket())
			if err := b.MakeBucket(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { removeBucket(t, b) })
			testReads(t, b)
			missing := open(uniqueBucket() + "-missing")
			_, err := missing.Get(context.Background(), "k", &driver.GetOptions{})
			if !errors.Is(err, store.ErrBucketMissing) || !strings.Contains(err.Error(), missing.name) {
				t.Fatalf("get on a missing bucket: %v", err)
			}
		})
	}
}

func testReads(t *testing.T, b *Bucket) {
	ctx := context.Background()
	md := map[string]string{"wharf-sha256": "abc", "run": "r-7"}
	old, err := b.Put(ctx, "dir/a b+c", strings.NewReader("old"), &store.PutOptions{Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	cur, err := b.Put(ctx, "dir/a b+c", strings.NewReader("0123456789"), &store.PutOptions{Size: 10, ContentType: "text/csv", Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	data, info := readAll(t, b, "dir/a b+c", nil)
	if string(data) != "0123456789" || info.ETag != cur.ETag || info.Size != 10 || info.ContentType != "text/csv" ||
		len(info.Metadata) != 2 || info.Metadata["wharf-sha256"] != "abc" || info.Metadata["run"] != "r-7" {
		t.Fatalf("get: %q %+v", data, info)
	}
	head, err := b.Head(ctx, "dir/a b+c")
	if err != nil || !head.LastModified.Equal(info.LastModified) || head.ETag != info.ETag {
		t.Fatalf("head %+v %v; get said %+v", head, err, info)
	}
	for _, tc := range []struct {
		off, n int64
		want   string
	}{{3, 4, "3456"}, {8, 0, "89"}, {0, 1, "0"}, {9, 5, "9"}, {10, 0, ""}} {
		data, info := readAll(t, b, "dir/a b+c", &store.GetOptions{Offset: tc.off, Length: tc.n, IfMatch: cur.ETag})
		if string(data) != tc.want || info.Size != 10 || info.ETag != cur.ETag {
			t.Errorf("pinned range %d+%d: %q %+v, want %q", tc.off, tc.n, data, info, tc.want)
		}
	}
	_, err = b.Get(ctx, "dir/a b+c", &store.GetOptions{IfMatch: old.ETag})
	var e *store.Error
	if !errors.Is(err, store.ErrPreconditionFailed) || !errors.As(err, &e) || e.Op != "get" || e.Key != "dir/a b+c" {
		t.Fatalf("get pinned to the superseded generation: %v", err)
	}
	_, err = b.Get(ctx, "dir/a b+c", &store.GetOptions{Offset: 10, IfMatch: old.ETag})
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("empty tail pinned to the superseded generation: %v", err)
	}
	if _, err := b.Get(ctx, "dir/none", &driver.GetOptions{}); !errors.Is(err, store.ErrNotExist) || errors.Is(err, store.ErrBucketMissing) {
		t.Fatalf("get of a missing key: %v", err)
	}
	if _, err := b.Get(ctx, "dir/none", &store.GetOptions{IfMatch: cur.ETag, Offset: 2}); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("pinned ranged get of a missing key: %v", err)
	}
}
