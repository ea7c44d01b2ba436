package azure

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// stageOnly stages one block at key and never commits it, as a process killed in the middle
// of a block upload leaves it.
func stageOnly(t *testing.T, c *Container, key string) {
	t.Helper()
	_, err := c.client.NewBlockBlobClient(key).StageBlock(context.Background(), base64.StdEncoding.EncodeToString([]byte("wharf-test-000001")),
		streaming.NopCloser(strings.NewReader("staged, never committed")), nil)
	if err != nil {
		t.Fatal(err)
	}
}

// TestAzuriteUploads: blobs with uncommitted blocks only are listed (not committed blobs, not
// keys outside the prefix), through the portable store below its prefix; aborting one deletes
// it and its blocks, aborting it again succeeds, and aborting a key that is committed leaves
// the blob.
func TestAzuriteUploads(t *testing.T) {
	s, c := openAzurite(t, testConfig{})
	ctx := context.Background()
	stageOnly(t, c, "raw/a.bin")
	stageOnly(t, c, "raw/b.bin")
	stageOnly(t, c, "other/c.bin")
	if _, err := s.Put(ctx, "raw/done.bin", strings.NewReader("committed"), &store.PutOptions{Size: 9}); err != nil {
		t.Fatal(err)
	}
	st := s.Sub("raw")
	ups, err := st.ListUploads(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 2 || ups[0].Key != "a.bin" || ups[1].Key != "b.bin" || ups[0].Initiated.IsZero() {
		t.Fatalf("uploads below raw/: %+v, want a.bin and b.bin with their start times", ups)
	}
	if err := st.AbortUpload(ctx, ups[0]); err != nil {
		t.Fatal(err)
	}
	if err := st.AbortUpload(ctx, ups[0]); err != nil {
		t.Errorf("aborting again: %v, want success", err)
	}
	if err := st.AbortUpload(ctx, store.Upload{Key: "done.bin"}); err != nil {
		t.Errorf("aborting a committed key: %v, want success", err)
	}
	if _, err := st.Head(ctx, "done.bin"); err != nil {
		t.Errorf("the committed blob after an abort at its key: %v", err)
	}
	left, err := s.ListUploads(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 2 || left[0].Key != "other/c.bin" || left[1].Key != "raw/b.bin" {
		t.Errorf("after the abort: %+v, want other/c.bin and raw/b.bin", left)
	}
}

// TestAzuriteUploadsContainerMissing: a container that does not exist is
// WHARF_BUCKET_MISSING, never an empty list.
func TestAzuriteUploadsContainerMissing(t *testing.T) {
	srv := testenv.Azurite(t)
	s := openURL(t, srv.Account, uniqueContainer(), relaxed(azuriteConfig(t, srv)), false)
	if _, err := s.ListUploads(context.Background(), ""); !errors.Is(err, store.ErrBucketMissing) {
		t.Fatalf("ListUploads on a missing container: %v, want ErrBucketMissing", err)
	}
}
