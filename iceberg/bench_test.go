package iceberg

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

// counting counts the requests its bucket receives.
type counting struct {
	driver.Bucket
	n *atomic.Int64
}

func (c counting) Unwrap() driver.Bucket { return c.Bucket }

func (c counting) Get(ctx context.Context, key string, o *driver.GetOptions) (*driver.Object, error) {
	c.n.Add(1)
	return c.Bucket.Get(ctx, key, o)
}

func (c counting) Head(ctx context.Context, key string) (driver.ObjectInfo, error) {
	c.n.Add(1)
	return c.Bucket.Head(ctx, key)
}

func (c counting) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	c.n.Add(1)
	return c.Bucket.Put(ctx, key, body, o)
}

func (c counting) Delete(ctx context.Context, key string, o *driver.DeleteOptions) error {
	c.n.Add(1)
	return c.Bucket.Delete(ctx, key, o)
}

func (c counting) List(ctx context.Context, o *driver.ListOptions) (driver.Page, error) {
	c.n.Add(1)
	return c.Bucket.List(ctx, o)
}

// countingMinIO returns the config of the test MinIO, its requests counted in n, and a bucket
// made for b (emptied and removed when b ends).
func countingMinIO(b *testing.B) (cfg *store.Config, bucket string, n *atomic.Int64) {
	n = new(atomic.Int64)
	cfg = testenv.MinIO(b).StoreConfig(b)
	cfg.Wrap = func(bk driver.Bucket) driver.Bucket { return counting{Bucket: bk, n: n} }
	bucket = fmt.Sprintf("wharf-iceberg-bench-%d-%d", os.Getpid(), bucketSeq.Add(1))
	tempBucket(b, "s3://"+bucket, cfg)
	return cfg, bucket, n
}

// BenchmarkCommitOnMinIO measures what one append commit costs on MinIO over loopback, with
// the table's history at each size of WHARF_ICEBERG_BENCH_HISTORY (default 1,10,100
// snapshots): a fresh Load (what a new process does) and an Append of one small Parquet file
// written beforehand, timed and counted in store requests, b.N times per size. It reports
// the medians: ms/commit and requests/commit (bench/iceberg.sh runs it).
func BenchmarkCommitOnMinIO(b *testing.B) {
	ctx := context.Background()
	cfg, bucket, n := countingMinIO(b)
	sizes := os.Getenv("WHARF_ICEBERG_BENCH_HISTORY")
	if sizes == "" {
		sizes = "1,10,100"
	}
	for _, s := range strings.Split(sizes, ",") {
		h, err := strconv.Atoi(s)
		if err != nil || h < 1 {
			b.Fatalf("WHARF_ICEBERG_BENCH_HISTORY: %q is no history size", s)
		}
		b.Run(fmt.Sprintf("history=%d", h), func(b *testing.B) {
			url := fmt.Sprintf("s3://%s/tables/h%d-%d", bucket, h, time.Now().UnixNano())
			st := openStore(b, url, cfg)
			tbl, err := Create(ctx, st, testSchema(), nil)
			if err != nil {
				b.Fatal(err)
			}
			for i := range h {
				f := writeParquet(b, st, fmt.Sprintf("data/history-%05d.parquet", i), int64(i*10), 10)
				if err := tbl.Append(ctx, []string{f}); err != nil {
					b.Fatal(err)
				}
			}
			var ms, reqs []float64
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				f := writeParquet(b, st, fmt.Sprintf("data/bench-%05d.parquet", i), int64(1e6+i*10), 10)
				b.StartTimer()
				before, start := n.Load(), time.Now()
				t, err := Load(ctx, st, nil)
				if err == nil {
					err = t.Append(ctx, []string{f})
				}
				if err != nil {
					b.Fatal(err)
				}
				ms = append(ms, float64(time.Since(start).Microseconds())/1000)
				reqs = append(reqs, float64(n.Load()-before))
			}
			b.ReportMetric(median(ms), "ms/commit")
			b.ReportMetric(median(reqs), "requests/commit")
		})
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkExportCommitOnMinIO measures what an export's commit adds to its run on MinIO:
// a fresh Load of the table (what the run does before its first part) and a Commit of the
// run's four parts from the footers it wrote (the quickstart's 1,000 rows in 4 parts), as an
// append (a delta run) and as an overwrite (a full run), with the table's history at each
// size of WHARF_ICEBERG_BENCH_HISTORY. It reports the medians of ms/commit and
// requests/commit (bench/iceberg.sh runs it).
func BenchmarkExportCommitOnMinIO(b *testing.B) {
	ctx := context.Background()
	cfg, bucket, n := countingMinIO(b)
	sizes := os.Getenv("WHARF_ICEBERG_BENCH_HISTORY")
	if sizes == "" {
		sizes = "1,10,100"
	}
	for _, op := range []string{"append", "overwrite"} {
		for _, s := range strings.Split(sizes, ",") {
			h, err := strconv.Atoi(s)
			if err != nil || h < 1 {
				b.Fatalf("WHARF_ICEBERG_BENCH_HISTORY: %q is no history size", s)
			}
			b.Run(fmt.Sprintf("%s/history=%d", op, h), func(b *testing.B) {
				url := fmt.Sprintf("s3://%s/tables/%s-h%d-%d", bucket, op, h, time.Now().UnixNano())
				st := openStore(b, url, cfg)
				tbl, err := Open(ctx, st, arrowSchema, nil)
				if err != nil {
					b.Fatal(err)
				}
				run := func(id string) []File {
					files := make([]File, 4)
					for p := range files {
						files[p] = writeWithFooter(b, st, fmt.Sprintf("%s/part-%05d.parquet", id, p), arrowSchema, int64(p*250), 250)
					}
					return files
				}
				for i := range h {
					id := fmt.Sprintf("history-%05d", i)
					if _, err := tbl.Commit(ctx, Change{ID: id, Overwrite: op == "overwrite", Files: run(id), Schema: arrowSchema}); err != nil {
						b.Fatal(err)
					}
				}
				var ms, reqs []float64
				for i := 0; b.Loop(); i++ {
					b.StopTimer()
					id := fmt.Sprintf("run-%05d", i)
					files := run(id)
					b.StartTimer()
					before, start := n.Load(), time.Now()
					t, err := Load(ctx, st, &Options{FromHint: true}) // as an export loads
					if err == nil {
						_, err = t.Commit(ctx, Change{ID: id, Overwrite: op == "overwrite", Files: files, Schema: arrowSchema})
					}
					if err != nil {
						b.Fatal(err)
					}
					ms = append(ms, float64(time.Since(start).Microseconds())/1000)
					reqs = append(reqs, float64(n.Load()-before))
				}
				b.ReportMetric(median(ms), "ms/commit")
				b.ReportMetric(median(reqs), "requests/commit")
			})
		}
	}
}
