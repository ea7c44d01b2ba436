package lease

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/cas/natskv"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/probe"
)

// counting counts the requests its bucket receives (one per call: each call is one attempt
// unless the retry policy retries, which it does not on a healthy server).
type counting struct {
	driver.Bucket
	n atomic.Int64
}

func (c *counting) Unwrap() driver.Bucket { return c.Bucket }

func (c *counting) Get(ctx context.Context, key string, o *driver.GetOptions) (*driver.Object, error) {
	c.n.Add(1)
	return c.Bucket.Get(ctx, key, o)
}

func (c *counting) Head(ctx context.Context, key string) (driver.ObjectInfo, error) {
	c.n.Add(1)
	return c.Bucket.Head(ctx, key)
}

func (c *counting) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	c.n.Add(1)
	return c.Bucket.Put(ctx, key, body, o)
}

func (c *counting) Delete(ctx context.Context, key string, o *driver.DeleteOptions) error {
	c.n.Add(1)
	return c.Bucket.Delete(ctx, key, o)
}

func (c *counting) List(ctx context.Context, o *driver.ListOptions) (driver.Page, error) {
	c.n.Add(1)
	return c.Bucket.List(ctx, o)
}

// BenchmarkLeaseOps measures each lease operation on MinIO: requests per operation and the
// p50 and p99 of its latency (bench/lease.sh runs it with -benchtime 200x). One iteration is
// acquire, reading the log's head, commit (a 1 KiB entry), renew, release; the probe, run
// once per process, is reported on its own.
func BenchmarkLeaseOps(b *testing.B) {
	srv := testenv.MinIO(b)
	ctx := context.Background()
	var c *counting
	cfg := srv.StoreConfig(b)
	cfg.Wrap = func(bk driver.Bucket) driver.Bucket { c = &counting{Bucket: bk}; return c }
	s := openFresh(b, "s3://"+uniqueBucket("bench")+"/jobs", cfg)
	c.n.Store(0)
	t0 := time.Now()
	res, err := probe.Run(ctx, s, nil)
	if err != nil {
		b.Fatal(err)
	}
	probeReq, probeTook := c.n.Load(), time.Since(t0)
	lc := DefaultConfig()
	lc.Node = "bench"
	l, err := Open(ctx, s, lc, &Options{Probe: res})
	if err != nil {
		b.Fatal(err)
	}
	benchOps(b, l, c.n.Load)
	b.ReportMetric(float64(probeReq), "probe-req") // after benchOps: ResetTimer drops metrics
	b.ReportMetric(ms(probeTook), "probe-ms")
}

// BenchmarkLeaseOpsOnNATS is BenchmarkLeaseOps over NATS JetStream key-value (a bucket of
// three replicas on the test cluster), through the same engine: no probe, one request per
// cas call.
func BenchmarkLeaseOpsOnNATS(b *testing.B) {
	ctx := context.Background()
	name := fmt.Sprintf("wharf-lease-bench-%d", time.Now().UnixNano())
	kv, err := natskv.Open(ctx, natskv.Options{Servers: testenv.NATS(b).URL(), Bucket: name})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = kv.DeleteBucket(context.Background()); kv.Close() })
	c := &countingCAS{Store: kv}
	lc := DefaultConfig()
	lc.Node = "bench"
	l, err := OpenCAS(c, lc, nil)
	if err != nil {
		b.Fatal(err)
	}
	benchOps(b, l, c.n.Load)
}

// countingCAS counts the calls made of a cas.Store.
type countingCAS struct {
	cas.Store
	n atomic.Int64
}

func (c *countingCAS) Get(ctx context.Context, key string) ([]byte, string, error) {
	c.n.Add(1)
	return c.Store.Get(ctx, key)
}

func (c *countingCAS) Create(ctx context.Context, key string, v []byte) (string, error) {
	c.n.Add(1)
	return c.Store.Create(ctx, key, v)
}

func (c *countingCAS) Update(ctx context.Context, key string, v []byte, rev string) (string, error) {
	c.n.Add(1)
	return c.Store.Update(ctx, key, v, rev)
}

// benchOps runs b.N iterations of acquire, commit (a 1 KiB entry), renew and release on l
// and reports each one's requests (the mean, and the most one took: the acquisition that
// checks the store sends one more) and its p50 and p99 latency; count reads the requests sent
// so far.
func benchOps(b *testing.B, l *Leaser, count func() int64) {
	ctx := context.Background()
	payload := strings.Repeat("x", 1024)
	lat := map[string][]time.Duration{}
	reqs, most := map[string]int64{}, map[string]int64{}
	op := func(name string, fn func() error) {
		n0, t0 := count(), time.Now()
		if err := fn(); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		lat[name] = append(lat[name], time.Since(t0))
		n := count() - n0
		reqs[name] += n
		most[name] = max(most[name], n)
	}
	var h *Lease
	op("first", func() (err error) { h, err = l.Acquire(ctx, "bench"); return err }) // creates the record
	op("first", func() error { return h.Release(ctx) })
	b.ResetTimer()
	for range b.N {
		op("acquire", func() (err error) { h, err = l.Acquire(ctx, "bench"); return err })
		op("head", func() error { _, err := h.Head(ctx, "bench"); return err })
		op("commit", func() error { _, err := h.Commit(ctx, "bench", payload); return err })
		op("renew", func() error { return h.Renew(ctx) })
		op("release", func() error { return h.Release(ctx) })
	}
	b.StopTimer()
	for _, name := range []string{"acquire", "head", "commit", "renew", "release"} {
		d := lat[name]
		slices.Sort(d)
		b.ReportMetric(float64(reqs[name])/float64(b.N), name+"-req/op")
		b.ReportMetric(float64(most[name]), name+"-max-req")
		b.ReportMetric(ms(d[len(d)/2]), name+"-p50-ms")
		b.ReportMetric(ms(d[min(len(d)-1, len(d)*99/100)]), name+"-p99-ms")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
