package backfill_test

import (
	"testing"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/backfill/coordtest"
)

func TestSoloKeepsTheCoordinatorContract(t *testing.T) {
	coordtest.Run(t, backfill.NewSolo())
}
