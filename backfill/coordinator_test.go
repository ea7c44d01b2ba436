package backfill_test

import (
	"testing"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/backfill/coordtest"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

func TestSoloKeepsTheCoordinatorContract(t *testing.T) {
	coordtest.Run(t, backfill.NewSolo())
}

func TestBucketOnTheMemStoreKeepsTheCoordinatorContract(t *testing.T) {
	coordtest.Run(t, backfill.NewBucket(store.New(mem.New(), nil).Sub(backfill.BucketPrefix("t"))))
}
