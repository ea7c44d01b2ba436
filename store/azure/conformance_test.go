package azure

import (
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/probe"
	"github.com/wharfdata/wharf/store/storetest"
)

// TestAzuriteConformance runs the conformance suite against Azurite 3.37, each case on a fresh
// container. Azurite enforces every condition wharf uses: create-if-absent (409
// BlobAlreadyExists, on Put Blob and on Put Block List alike), If-Match on puts, deletes,
// copies and reads (412 ConditionNotMet).
//
// OpenUploads is nil: Azure has no open-upload object to count. A failed staged upload leaves
// uncommitted blocks that no call can discard; TestFailedBlockUploadCommitsNothing asserts
// that nothing of them is committed or visible.
func TestAzuriteConformance(t *testing.T) {
	srv := testenv.Azurite(t)
	cfg := relaxed(azuriteConfig(t, srv))
	storetest.Run(t, storetest.Harness{
		Name: "azure-azurite",
		Open: func(t *testing.T) *store.Store { return openURL(t, srv.Account, uniqueContainer(), cfg, true) },
		OpenMissing: func(t *testing.T) *store.Store {
			return openURL(t, srv.Account, uniqueContainer()+"-missing", cfg, false)
		},
		Want: map[string]string{
			probe.CapConditionalCreate:  probe.Yes,
			probe.CapConditionalReplace: probe.Yes,
			probe.CapConditionalDelete:  probe.Yes,
			probe.CapPinnedRead:         probe.Yes,
			probe.CapUserMetadata:       probe.Yes,
			probe.CapListAfterWrite:     probe.Yes,
		},
		Large:     true,
		Checksums: true,
		PartSize:  MinPartSize,
		LargeSize: 4<<20 + 1234,
	})
}

// The capabilities the portable store learns from this backend when it opens one.
var (
	_ driver.Bucket       = (*Container)(nil)
	_ driver.Copier       = (*Container)(nil)
	_ driver.BucketMaker  = (*Container)(nil)
	_ driver.BatchDeleter = (*Container)(nil)
)
