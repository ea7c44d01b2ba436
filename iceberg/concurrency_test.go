package iceberg

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

const (
	writers      = 4
	filesEach    = 10
	testAttempts = 40 // contention is high in a test: 4 writers doing nothing but commit
)

// appendConcurrently has writers, each with its own Table (its own Load), append filesEach
// files one commit each to the table at url, and returns the files' locations. broken makes
// every writer commit without the condition. It returns the first commit error, if any.
func appendConcurrently(t *testing.T, url string, cfg *store.Config, broken bool) ([]string, int64, error) {
	t.Helper()
	ctx := context.Background()
	st := openStore(t, url, cfg)
	if _, err := Create(ctx, st, testSchema(), nil); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		files []string
		errs  []error
		lost  atomic.Int64
		start = make(chan struct{})
		wg    sync.WaitGroup
	)
	for w := range writers {
		wst := openStore(t, url, cfg)
		tbl, err := Load(ctx, wst, &Options{Attempts: testAttempts, Backoff: 2 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		tbl.unconditional = broken
		tbl.beforeCreate = func() {
			lost.Add(1)
			if broken {
				time.Sleep(time.Millisecond) // widen the window the missing condition leaves open
			}
		}
		wg.Go(func() {
			<-start
			for i := range filesEach {
				id := int64(w*filesEach + i)
				key := writeParquet(t, wst, fmt.Sprintf("data/w%d-%02d.parquet", w, i), id*10, 10)
				err := tbl.Append(ctx, []string{key})
				mu.Lock()
				files = append(files, tbl.Location()+"/"+key)
				if err != nil {
					errs = append(errs, fmt.Errorf("writer %d file %d: %w", w, i, err))
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		return files, lost.Load(), errs[0]
	}
	return files, lost.Load(), nil
}

// Four writers appending ten files each through their own Tables end with a linear history
// of 40 appends holding every file once, and a scan reads every row.
func TestConcurrentAppends(t *testing.T) {
	forEachStore(t, func(t *testing.T, url string, cfg *store.Config) {
		files, tries, err := appendConcurrently(t, url, cfg, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkHistory(context.Background(), openStore(t, url, cfg), writers*filesEach, files); err != nil {
			t.Fatal(err)
		}
		tbl, err := Load(context.Background(), openStore(t, url, cfg), nil)
		if err != nil {
			t.Fatal(err)
		}
		if s := scan(t, tbl); len(s.ids) != writers*filesEach*10 {
			t.Errorf("scan read %d rows, want %d", len(s.ids), writers*filesEach*10)
		}
		if left := unreferenced(t, tbl); len(left) > 0 {
			t.Errorf("%d lost attempts' files left in metadata/: %v", len(left), firstFew(left))
		}
		t.Logf("%d commits took %d creates of a metadata file", writers*filesEach, tries)
	})
}

// The same writers committing without the condition lose appends, and the history checker
// says so: it is able to fail.
func TestConcurrentAppendsUnconditionalLoses(t *testing.T) {
	forEachStore(t, func(t *testing.T, url string, cfg *store.Config) {
		files, _, err := appendConcurrently(t, url, cfg, true)
		if err != nil {
			t.Logf("a broken commit failed: %v", err) // a checker's job, not this: go on
		}
		err = checkHistory(context.Background(), openStore(t, url, cfg), writers*filesEach, files)
		if err == nil {
			t.Fatal("commits without the condition: the history checker found nothing wrong")
		}
		t.Logf("checker: %v", err)
	})
}

// Two handles at one version commit one after the other: with the condition the second
// loses the race, rebases and keeps both files; without it, it overwrites the first's version
// and the checker reports the lost file. Deterministic, unlike the concurrent tests.
func TestStaleHandle(t *testing.T) {
	for _, broken := range []bool{false, true} {
		t.Run(fmt.Sprintf("unconditional=%v", broken), func(t *testing.T) {
			ctx := context.Background()
			st, _ := newFolderTable(t)
			a, err := Load(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Load(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			b.unconditional = broken
			fa := writeParquet(t, st, "data/a.parquet", 0, 1)
			fb := writeParquet(t, st, "data/b.parquet", 1, 1)
			if err := a.Append(ctx, []string{fa}); err != nil {
				t.Fatal(err)
			}
			if err := b.Append(ctx, []string{fb}); err != nil {
				t.Fatal(err)
			}
			err = checkHistory(ctx, st, 2, []string{a.Location() + "/" + fa, a.Location() + "/" + fb})
			switch {
			case !broken && err != nil:
				t.Fatal(err)
			case broken && err == nil:
				t.Fatal("a stale unconditional commit: the checker found nothing wrong")
			}
		})
	}
}

var bucketSeq atomic.Int64

// The concurrent appends on MinIO, when the test servers run.
func TestMinIOConcurrentAppends(t *testing.T) {
	srv := testenv.MinIO(t)
	ctx := context.Background()
	cfg := srv.StoreConfig(t)
	bucket := fmt.Sprintf("wharf-iceberg-%d-%d", os.Getpid(), bucketSeq.Add(1))
	tempBucket(t, "s3://"+bucket, cfg)
	url := "s3://" + bucket + "/tables/t"
	files, tries, err := appendConcurrently(t, url, cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkHistory(ctx, openStore(t, url, cfg), writers*filesEach, files); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d commits took %d creates of a metadata file", writers*filesEach, tries)
}

// unreferenced lists the Avro files in tbl's metadata/ that no snapshot of its current
// version names (a manifest list, or a manifest of one): what lost attempts left behind.
func unreferenced(t testing.TB, tbl *Table) []string {
	t.Helper()
	ctx := context.Background()
	fio := tbl.FileIO().WithContext(ctx)
	named := map[string]bool{}
	for _, snap := range tbl.Snapshots() {
		named[snap.ManifestList] = true
		manifests, err := snap.Manifests(fio)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range manifests {
			named[m.FilePath()] = true
		}
	}
	var left []string
	for o, err := range tbl.st.Walk(ctx, metadataDir) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(o.Key, ".avro") && !named[tbl.Location()+"/"+o.Key] {
			left = append(left, o.Key)
		}
	}
	return left
}
