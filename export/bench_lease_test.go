package export

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/probe"
	_ "github.com/wharfdata/wharf/store/s3" // the s3:// backend
)

// counted counts the requests its bucket receives, and those of the probe apart.
type counted struct {
	driver.Bucket
	n, probe *atomic.Int64
}

func (c counted) Unwrap() driver.Bucket { return c.Bucket }

func (c counted) count(key string) {
	c.n.Add(1)
	if strings.Contains(key, "_wharf/probe/") {
		c.probe.Add(1)
	}
}

func (c counted) Get(ctx context.Context, key string, o *driver.GetOptions) (*driver.Object, error) {
	c.count(key)
	return c.Bucket.Get(ctx, key, o)
}

func (c counted) Head(ctx context.Context, key string) (driver.ObjectInfo, error) {
	c.count(key)
	return c.Bucket.Head(ctx, key)
}

func (c counted) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	c.count(key)
	return c.Bucket.Put(ctx, key, body, o)
}

func (c counted) Delete(ctx context.Context, key string, o *driver.DeleteOptions) error {
	c.count(key)
	return c.Bucket.Delete(ctx, key, o)
}

func (c counted) List(ctx context.Context, o *driver.ListOptions) (driver.Page, error) {
	c.count(o.Prefix)
	return c.Bucket.List(ctx, o)
}

// BenchmarkLeasedExportQuickstart and BenchmarkLeasedExport1M measure what state: bucket
// adds to an export to MinIO: each iteration runs the same export with a local state file
// and then with state: bucket (a fresh process's worth: probe, lease, log, release), then
// with state: bucket and the store's cas verdict remembered by an earlier process (no probe),
// and reports the medians and their differences, in milliseconds and requests.
func BenchmarkLeasedExportQuickstart(b *testing.B) { benchLeased(b, 1000, 250) }

func BenchmarkLeasedExport1M(b *testing.B) { benchLeased(b, 1_000_000, 0) }

func benchLeased(b *testing.B, rows, chunk int) {
	srv := testenv.MinIO(b)
	ctx := context.Background()
	dir := b.TempDir()
	src := filepath.Join(dir, "src.db")
	if err := CreateDemo(ctx, src, rows); err != nil {
		b.Fatal(err)
	}
	var n, probeN atomic.Int64
	sc := *srv.StoreConfig(b)
	sc.Wrap = func(bk driver.Bucket) driver.Bucket { return counted{Bucket: bk, n: &n, probe: &probeN} }
	bucket := fmt.Sprintf("wharf-bench-lease-%d", os.Getpid())
	s, err := store.Open(ctx, "s3://"+bucket, &sc)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.MakeBucket(ctx); err != nil {
		b.Fatal(err)
	}
	e := Export{Name: fmt.Sprintf("orders-%d", rows), Source: "sqlite://" + src, Table: "orders", ChunkKey: "id", ChunkRows: chunk,
		Destination: "s3://" + bucket + "/{export}/{run_id}/", Store: sc}
	lc := lease.DefaultConfig()
	lc.Node = "bench"
	modes := map[string]Options{
		"local":  {StatePath: filepath.Join(dir, "state.db"), Getenv: os.Getenv},
		"bucket": {StatePath: StateBucket, Getenv: os.Getenv, Lease: &lc},
		// as a process that finds the store's cas verdict remembered by an earlier one
		"remembered": {StatePath: StateBucket, Getenv: os.Getenv, Lease: &lc,
			Verdicts: &probe.Verdicts{Path: filepath.Join(dir, "probes.json")}},
	}
	if _, err := modes["remembered"].Verdicts.Coordination(ctx, s); err != nil {
		b.Fatal(err)
	}
	took, reqs, probeReqs := map[string][]time.Duration{}, map[string][]int64{}, []int64{}
	b.ResetTimer()
	for range b.N {
		for _, mode := range []string{"local", "bucket", "remembered"} {
			n.Store(0)
			probeN.Store(0)
			t0 := time.Now()
			if _, err := Run(ctx, e, modes[mode]); err != nil {
				b.Fatalf("%s: %v", mode, err)
			}
			took[mode] = append(took[mode], time.Since(t0))
			reqs[mode] = append(reqs[mode], n.Load())
			if mode == "bucket" {
				probeReqs = append(probeReqs, probeN.Load())
			}
		}
	}
	b.StopTimer()
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	medN := func(d []int64) int64 { slices.Sort(d); return d[len(d)/2] }
	local, bucketT := med(took["local"]), med(took["bucket"])
	b.ReportMetric(float64(local.Microseconds())/1000, "local-ms")
	b.ReportMetric(float64(bucketT.Microseconds())/1000, "bucket-ms")
	b.ReportMetric(float64((bucketT-local).Microseconds())/1000, "overhead-ms")
	b.ReportMetric(float64(medN(reqs["local"])), "local-req")
	b.ReportMetric(float64(medN(reqs["bucket"])), "bucket-req")
	b.ReportMetric(float64(medN(reqs["bucket"])-medN(reqs["local"])), "overhead-req")
	b.ReportMetric(float64(medN(probeReqs)), "probe-req")
	rem := med(took["remembered"])
	b.ReportMetric(float64((rem-local).Microseconds())/1000, "remembered-overhead-ms")
	b.ReportMetric(float64(medN(reqs["remembered"])-medN(reqs["local"])), "remembered-overhead-req")
}
