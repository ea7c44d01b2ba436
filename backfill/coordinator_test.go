package backfill_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/backfill/coordtest"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
	_ "github.com/wharfdata/wharf/store/s3" // the s3:// backend of the MinIO tests
)

func TestSoloKeepsTheCoordinatorContract(t *testing.T) {
	coordtest.Run(t, backfill.NewSolo())
}

func TestBucketOnTheMemStoreKeepsTheCoordinatorContract(t *testing.T) {
	coordtest.Run(t, backfill.NewBucket(store.New(mem.New(), nil).Sub(backfill.BucketPrefix("t"))))
}

func TestBucketOnMinIOAndSeaweedFSKeepsTheCoordinatorContract(t *testing.T) {
	for _, srv := range testenv.S3Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			name := "wharf-bf-coord-" + srv.Name + "-" + fmtNow()
			s, err := store.Open(context.Background(), "s3://"+name, srv.StoreConfig(t))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.MakeBucket(context.Background()); err != nil {
				t.Fatal(err)
			}
			srv.RemoveBucketOnCleanup(t, name)
			coordtest.Run(t, backfill.NewBucket(s.Sub(backfill.BucketPrefix(t.Name()[len(t.Name())-5:]+"-"+fmtNow()))))
		})
	}
}

func fmtNow() string { return strconv.FormatInt(time.Now().UnixNano(), 36) }
