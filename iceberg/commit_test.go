package iceberg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/storetest"
)

// A lost answer to the create of the next metadata file is settled by its put-id: when the
// file landed the commit stands; when it did not, the commit is tried again. Either way the
// table has the one snapshot.
func TestCommitLostAnswer(t *testing.T) {
	for _, applied := range []bool{true, false} {
		t.Run(fmt.Sprintf("applied=%v", applied), func(t *testing.T) {
			ctx := context.Background()
			name := fmt.Sprintf("iceberg-lost-%d-%d", os.Getpid(), storeSeq.Add(1))
			var faulty *storetest.FaultyBucket
			cfg := &store.Config{Wrap: func(b driver.Bucket) driver.Bucket {
				faulty = storetest.Faulty(b, storetest.Rule{Op: "put", Key: "t/" + metadataKey(2), Times: 1,
					Fault: driver.FaultTransport, AfterApply: applied})
				return faulty
			}}
			st := openStore(t, "mem://"+name+"/t", cfg)
			tbl, err := Create(ctx, st, testSchema(), nil)
			if err != nil {
				t.Fatal(err)
			}
			f := writeParquet(t, st, "data/a.parquet", 0, 1)
			if err := tbl.Append(ctx, []string{f}); err != nil {
				t.Fatal(err)
			}
			if faulty.Faults("put") != 1 {
				t.Fatalf("%d faults injected, want 1", faulty.Faults("put"))
			}
			if err := checkHistory(ctx, st, 1, []string{tbl.Location() + "/" + f}); err != nil {
				t.Fatal(err)
			}
			if tbl.Version() != 2 {
				t.Errorf("version %d, want 2", tbl.Version())
			}
		})
	}
}

// A commit that loses every attempt fails with ErrCommitConflict and commits nothing.
func TestCommitConflict(t *testing.T) {
	ctx := context.Background()
	st, _ := newFolderTable(t)
	loser, err := Load(ctx, st, &Options{Attempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	winner, err := Load(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Before each of the loser's creates, the winner commits the version it is about to make.
	n := 0
	loser.beforeCreate = func() {
		n++
		if err := winner.Refresh(ctx); err != nil {
			t.Error(err)
		}
		if err := winner.Append(ctx, []string{writeParquet(t, st, fmt.Sprintf("data/w%d.parquet", n), int64(n), 1)}); err != nil {
			t.Error(err)
		}
	}
	err = loser.Append(ctx, []string{writeParquet(t, st, "data/loser.parquet", 100, 1)})
	if !errors.Is(err, ErrCommitConflict) {
		t.Fatalf("append: %v, want ErrCommitConflict", err)
	}
	if n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
	final, err := Load(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(final.Snapshots()); got != 3 {
		t.Errorf("%d snapshots, want the winner's 3", got)
	}
}

// Files outside the table's location are refused by name before anything is read.
func TestAppendOutsideTable(t *testing.T) {
	ctx := context.Background()
	_, tbl := newFolderTable(t)
	for _, f := range []string{"mem://other/x.parquet", "s3://b/t/data/x.parquet", "../x.parquet"} {
		err := tbl.Append(ctx, []string{f})
		if err == nil {
			t.Errorf("append %q: no error", f)
		} else if !errors.Is(err, ErrOutsideTable) && !errors.Is(err, store.ErrKeyInvalid) {
			t.Errorf("append %q: %v", f, err)
		}
	}
	if tbl.Version() != 1 {
		t.Errorf("version %d after refused appends", tbl.Version())
	}
}
